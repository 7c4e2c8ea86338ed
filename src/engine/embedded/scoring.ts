// Packing ScoreRequests into one batch, and the lm-head / value-head on the scored positions only.
// For request b, scored token k (k = 0 … len − scoreFrom − 1) is tokens[scoreFrom + k], predicted from
// hidden row (scoreFrom − 1 + k); the value at the same row is the value of the state before it
// (types.ts, ScoreRequest). The last token of a request is never an input, so it is not forwarded.
import { reserveMemory } from './memory-budget.ts';
import type { ScoreRequest } from '../types.ts';
import type { SeqSpan } from './decoder-layer.ts';
import { sgemm } from './gemm.ts';
import { sharedFloats, sharedInts } from '../shareable-arrays.ts';
import { tokenLogprobsBackwardRows, tokenLogprobsRows } from './row-jobs.ts';
import type { Param } from './param.ts';
import { ensureGrad } from './param.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';

export interface PackedBatch {
  tokens: Int32Array;
  seqs: SeqSpan[];
  /** Packed hidden row of each scored position, [M]. */
  rows: Int32Array;
  /** The token scored at each of those rows, [M]. */
  targets: Int32Array;
  /** Number of scored tokens per request. */
  counts: number[];
}

export function packScoreRequests(batch: ScoreRequest[], vocabSize: number): PackedBatch {
  const tokens: number[] = [], seqs: SeqSpan[] = [], rows: number[] = [], targets: number[] = [], counts: number[] = [];
  batch.forEach((req, b) => {
    const n = req.tokens.length;
    if (!Number.isInteger(req.scoreFrom) || req.scoreFrom < 1 || req.scoreFrom > n) {
      throw new Error(`request ${b}: scoreFrom must be an integer in [1, ${n}], got ${req.scoreFrom}`);
    }
    for (const t of req.tokens) if (!(Number.isInteger(t) && t >= 0 && t < vocabSize)) throw new Error(`request ${b}: token id ${t} is outside the vocabulary (size ${vocabSize})`);
    counts.push(n - req.scoreFrom);
    if (n - req.scoreFrom === 0) return;
    const row0 = tokens.length, len = n - 1;
    seqs.push({ row0, len, past: 0, slot: b });
    for (let i = 0; i < len; i++) tokens.push(req.tokens[i]!);
    for (let k = 0; k < n - req.scoreFrom; k++) {
      rows.push(row0 + req.scoreFrom - 1 + k);
      targets.push(req.tokens[req.scoreFrom + k]!);
    }
  });
  const shared = sharedInts(targets.length); // the log-softmax's workers read them (row-jobs.ts)
  shared.set(targets);
  return { tokens: Int32Array.from(tokens), seqs, rows: Int32Array.from(rows), targets: shared, counts };
}

export function gatherRows(hidden: Float32Array, rows: Int32Array, H: number): Float32Array {
  const out = sharedFloats(rows.length * H); // the output projection's operand: shared (thread-pool.ts)
  for (let i = 0; i < rows.length; i++) out.set(hidden.subarray(rows[i]! * H, (rows[i]! + 1) * H), i * H);
  return out;
}

export function scatterAddRows(dSel: Float32Array, rows: Int32Array, H: number, dHidden: Float32Array): void {
  for (let i = 0; i < rows.length; i++) {
    const o = rows[i]! * H;
    for (let j = 0; j < H; j++) dHidden[o + j]! += dSel[i * H + j]!;
  }
}

/** Splits a flat [M] array into per-request arrays. */
export function splitByCounts(flat: Float32Array, counts: number[]): Float32Array[] {
  const out: Float32Array[] = [];
  let o = 0;
  for (const c of counts) { out.push(flat.slice(o, o + c)); o += c; }
  return out;
}

export function joinByCounts(parts: Float32Array[] | undefined, counts: number[], what: string): Float32Array {
  const M = counts.reduce((a, b) => a + b, 0);
  const flat = sharedFloats(M);
  if (!parts) throw new Error(`backward needs ${what}`);
  if (parts.length !== counts.length) throw new Error(`${what} has ${parts.length} sequences, the forward had ${counts.length}`);
  let o = 0;
  parts.forEach((p, b) => {
    if (p.length !== counts[b]) throw new Error(`${what}[${b}] has ${p.length} entries, expected ${counts[b]}`);
    flat.set(p, o);
    o += p.length;
  });
  return flat;
}

export interface LmHeadPass {
  sel: Float32Array;
  /** softmax(logits / T) [M, V], overwritten by dL/dlogits in the backward. */
  probs: Float32Array;
  logprobs: Float32Array;
}

/** Per-token log-probs of the targets at the scored rows under softmax(logits / temperature). */
export function lmHeadForward(sel: Float32Array, M: number, H: number, Wout: Param, targets: Int32Array, temperature: number): LmHeadPass {
  const V = Wout.shape[0]!;
  reserveMemory('a micro-batch\'s logits', 4 * M * V, `${M} scored tokens × ${V} vocabulary entries`);
  const logits = takeBuffer(M * V);
  sgemm(false, true, M, V, H, 1, sel, 0, H, Wout.data, 0, H, 0, logits, 0, V);
  const logprobs = sharedFloats(M);
  tokenLogprobsRows(logits, M, V, targets, temperature, logprobs);
  return { sel, probs: logits, logprobs };
}

/** Returns the pass's probabilities [M, V] to the buffer pool (after its backward, or when no backward will come). */
export function releaseLmHeadPass(p: LmHeadPass): void {
  releaseBuffers(p.probs);
}

/** dlogprobs [M] → dL/dsel [M, H]; accumulates into Wout.grad when trainWout. Consumes (and releases) the pass's probabilities. */
export function lmHeadBackward(p: LmHeadPass, M: number, H: number, Wout: Param, targets: Int32Array, temperature: number, dlp: Float32Array, trainWout: boolean): Float32Array {
  const V = Wout.shape[0]!;
  const dLogits = p.probs;
  tokenLogprobsBackwardRows(dLogits, M, V, targets, temperature, dlp);
  const dSel = sharedFloats(M * H);
  sgemm(false, false, M, H, V, 1, dLogits, 0, V, Wout.data, 0, H, 0, dSel, 0, H);
  if (trainWout) sgemm(true, false, V, H, M, 1, dLogits, 0, V, p.sel, 0, H, 1, ensureGrad(Wout), 0, H);
  releaseLmHeadPass(p);
  return dSel;
}
