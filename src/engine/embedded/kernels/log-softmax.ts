// Log-probabilities of chosen tokens under softmax(logits / temperature), and the gradient back to the logits.
// logits [rows, vocab]. temperature 0 or 1 means unscaled (spec: behaviour and recomputed log-probs agree).
// The softmax itself is kernels/softmax.ts; the backward's row scaling runs in the WebAssembly SIMD
// kernels when available, in the loop below otherwise.
import { softmaxRows } from './softmax.ts';
import { simdKernels } from '../wasm/simd.ts';

export function effectiveTemperature(temperature: number | undefined): number {
  if (temperature !== undefined && !(temperature >= 0 && Number.isFinite(temperature))) throw new Error(`temperature must be a finite number >= 0, got ${temperature}`);
  return temperature === undefined || temperature === 0 ? 1 : temperature;
}

/**
 * lp[r] = z[r, tok]/T − logsumexp(z[r]/T). Overwrites `logits` with the probabilities softmax(z/T),
 * which is all the backward needs.
 */
export function tokenLogprobs(
  logits: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, lp_R: Float32Array,
): void {
  const invT = 1 / temperature;
  const zTok = new Float32Array(rows);
  for (let r = 0; r < rows; r++) zTok[r] = logits[r * vocab + tokens[r]!]!;
  const lse = new Float64Array(rows);
  softmaxRows(logits, 0, rows, vocab, vocab, 0, invT, lse, 0);
  for (let r = 0; r < rows; r++) lp_R[r] = zTok[r]! * invT - lse[r]!;
}

/** dlogits[r, j] = dlp[r] · (δ_{j,tok} − p_j) / T, written in place over the probabilities. */
export function tokenLogprobsBackward(probs: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, dlp_R: Float32Array): void {
  const invT = 1 / temperature;
  const coef = new Float32Array(rows);
  for (let r = 0; r < rows; r++) coef[r] = -dlp_R[r]! * invT;
  if (!simdKernels()?.scaleRows(probs, rows, vocab, coef)) {
    tokenLogprobsBackwardJs(probs, rows, vocab, tokens, temperature, dlp_R);
    return;
  }
  for (let r = 0; r < rows; r++) probs[r * vocab + tokens[r]!]! += dlp_R[r]! * invT;
}

export function tokenLogprobsBackwardJs(probs: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, dlp_R: Float32Array): void {
  const invT = 1 / temperature;
  for (let r = 0; r < rows; r++) {
    const o = r * vocab, d = dlp_R[r]! * invT;
    for (let j = 0; j < vocab; j++) probs[o + j] = -d * probs[o + j]!;
    probs[o + tokens[r]!]! += d;
  }
}
