// Log-probabilities of chosen tokens under softmax(logits / temperature), and the gradient back to the logits.
// logits [rows, vocab]. temperature 0 or 1 means unscaled (spec: behaviour and recomputed log-probs agree).
// The WebAssembly SIMD kernels (wasm/simd.ts) run both passes when available; the loops are the
// fallback and the reference.
import { fastExp } from './fast-exp.ts';
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
  const simd = simdKernels();
  const invT = 1 / temperature;
  const zTok = new Float32Array(rows);
  for (let r = 0; r < rows; r++) zTok[r] = logits[r * vocab + tokens[r]!]!;
  const max = new Float32Array(rows), sum = new Float64Array(rows);
  if (!simd?.softmaxRows(logits, 0, rows, vocab, vocab, 0, invT, max, sum)) {
    tokenLogprobsJs(logits, rows, vocab, tokens, temperature, lp_R);
    return;
  }
  for (let r = 0; r < rows; r++) lp_R[r] = (zTok[r]! - max[r]!) * invT - Math.log(sum[r]!);
}

export function tokenLogprobsJs(
  logits: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, lp_R: Float32Array,
): void {
  const invT = 1 / temperature;
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    let max = -Infinity;
    for (let j = 0; j < vocab; j++) if (logits[o + j]! > max) max = logits[o + j]!;
    const zTok = logits[o + tokens[r]!]!;
    let sum = 0;
    for (let j = 0; j < vocab; j++) {
      const e = fastExp((logits[o + j]! - max) * invT);
      logits[o + j] = e;
      sum += e;
    }
    lp_R[r] = (zTok - max) * invT - Math.log(sum);
    const inv = 1 / sum;
    for (let j = 0; j < vocab; j++) logits[o + j]! *= inv;
  }
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
