// Causal scaled-dot-product attention with grouped-query heads, one sequence at a time.
// Layouts (row-major, rows = tokens): q, out, dq [rows, nHeads·headDim]; k, v, dk, dv [rows, nKvHeads·headDim].
// Query head h reads key/value head floor(h / (nHeads / nKvHeads)), as transformers' repeat_kv does.
// Query i sits at absolute position past + i and sees keys 0 … past + i (the KV cache holds the first `past`).
// The forward keeps the row log-sum-exp (lse) per head, and, when the caller gives it room
// (probs_HLL), the probabilities themselves. The backward uses kept probabilities, or recomputes
// them from lse (FlashAttention's trick) so that long sequences need O(tokens) memory, not O(tokens²).
import { sgemm } from '../gemm.ts';
import { fastExp } from './fast-exp.ts';
import { softmaxRows, softmaxRowsBackward } from './softmax.ts';
import { releaseBuffers, takeBuffer } from '../buffer-pool.ts';

export interface AttentionDims {
  nHeads: number;
  nKvHeads: number;
  headDim: number;
}

/** Two score-sized work areas of at least `floats` elements each, owned by the calling thread. */
export type ScoreScratch = (floats: number) => [Float32Array, Float32Array];

// The main thread's score scratch, from the buffer pool so that the SIMD kernels work on it in place
// (wasm/arena.ts); kept for the life of the process and replaced by a larger pair when a longer
// sequence comes. An attention worker (attention-pool.ts) installs its own with useScoreScratch.
let scratchA: Float32Array = new Float32Array(0);
let scratchB: Float32Array = new Float32Array(0);
/** The calling thread's own score scratch (the default; tests reinstall it after lending their own). */
export const ownScoreScratch: ScoreScratch = (n) => {
  if (scratchA.length < n) {
    releaseBuffers(scratchA, scratchB);
    scratchA = takeBuffer(n);
    scratchB = takeBuffer(n);
  }
  return [scratchA, scratchB];
};
let scratch: ScoreScratch = ownScoreScratch;

/** Replaces this thread's score scratch (attention workers: blocks the main thread lent them). */
export function useScoreScratch(s: ScoreScratch): void {
  scratch = s;
}

/**
 * out rows [outRow0, outRow0+Lq) ← attention of q rows [qRow0, qRow0+Lq) over k/v rows [kRow0, kRow0+past+Lq).
 * lse_HL (optional) receives log Σ exp(scores) per head and query, laid out [nHeads, Lq] from lseOffset.
 * probs_HLL (optional, full passes only: past = 0) receives the probabilities [nHeads, Lq, Lq] from
 * probsOffset, zeros above the diagonal, for attentionBackward.
 * Only query heads [h0, h1) are computed (the attention workers split a pass by heads).
 */
export function attentionForward(
  dims: AttentionDims,
  q: Float32Array, qRow0: number, Lq: number,
  k: Float32Array, v: Float32Array, kRow0: number, past: number,
  out: Float32Array, outRow0: number,
  lse_HL: Float32Array | null, lseOffset: number,
  probs_HLL: Float32Array | null = null, probsOffset = 0, h0 = 0, h1 = dims.nHeads,
): void {
  const { nHeads, nKvHeads, headDim } = dims;
  const qStride = nHeads * headDim, kvStride = nKvHeads * headDim;
  const ctx = past + Lq;
  const group = nHeads / nKvHeads;
  const scale = 1 / Math.sqrt(headDim);
  if (probs_HLL && past !== 0) throw new Error('attentionForward: probabilities are kept only for full passes (past = 0)');
  const [scratchS] = scratch(Lq * ctx);
  if (Lq === 1 && h0 === 0 && h1 === nHeads && nKvHeads === nHeads && nHeads > 1 && nHeads * ctx * headDim > SMALL_ATTENTION_MACS) {
    attentionDecodeAllHeads(dims, q, qRow0, k, v, kRow0, ctx, out, outRow0, lse_HL, lseOffset);
    return;
  }
  if (Lq === 1 && group > 1 && group * ctx * headDim > SMALL_ATTENTION_MACS) {
    attentionDecodeGroups(dims, q, qRow0, k, v, kRow0, ctx, out, outRow0, lse_HL, lseOffset, h0, h1);
    return;
  }
  if (Lq * ctx * headDim <= SMALL_ATTENTION_MACS) {
    attentionForwardLoops(dims, q, qRow0, Lq, k, v, kRow0, past, out, outRow0, lse_HL, lseOffset, scratchS, probs_HLL, probsOffset, h0, h1);
    return;
  }
  const blocks = causalBlocks(Lq);
  for (let h = h0; h < h1; h++) {
    const g = Math.floor(h / group);
    // Scores, then probabilities, in place: in the kept-probabilities buffer when there is one.
    const S = probs_HLL ? probs_HLL.subarray(probsOffset + h * Lq * ctx, probsOffset + (h + 1) * Lq * ctx) : scratchS;
    // Scores of each block of query rows against the keys it sees; the softmax zeroes the rest.
    for (const [r0, r1] of blocks) {
      sgemm(false, true, r1 - r0, past + r1, headDim, scale, q, (qRow0 + r0) * qStride + h * headDim, qStride,
        k, kRow0 * kvStride + g * headDim, kvStride, 0, S, r0 * ctx, ctx);
    }
    softmaxRows(S, 0, Lq, ctx, past + 1, 1, 1, lse_HL, lseOffset + h * Lq);
    for (const [r0, r1] of blocks) {
      sgemm(false, false, r1 - r0, headDim, past + r1, 1, S, r0 * ctx, ctx, v, kRow0 * kvStride + g * headDim, kvStride,
        0, out, (outRow0 + r0) * qStride + h * headDim, qStride);
    }
  }
}

/**
 * Rows of query blocks [r0, r1): a block sees keys [0, past + r1), so its products skip the keys
 * every one of its rows masks out (for T rows in blocks of B, about (T/B + 1)/(2T/B) of the full
 * square's work: 3/4 at T = 128, under 6/10 at T = 512). Smaller blocks skip more but make more
 * calls; 64 was fastest for the reference model's 128-token rows (docs/performance.md).
 */
const CAUSAL_BLOCK = 64;
function causalBlocks(rows: number): [number, number][] {
  const out: [number, number][] = [];
  for (let r0 = 0; r0 < rows; r0 += CAUSAL_BLOCK) out.push([r0, Math.min(rows, r0 + CAUSAL_BLOCK)]);
  return out;
}

let scratchQ = new Float32Array(0);
let scratchO = new Float32Array(0);

/**
 * One decoded token of a multi-head (not grouped) model against its cache, every head in two sgemm
 * calls instead of two per head (at one query row those calls cost more in overhead than in
 * arithmetic). The query row is spread into a block-diagonal [nHeads, nHeads·headDim] matrix so
 * that one product gives every head's scores (S[h, j] = q_h · k_{j,h}; the zero blocks add exact
 * zeros), and P [nHeads, ctx] · V [ctx, nHeads·headDim] holds each head's output in its diagonal block.
 */
function attentionDecodeAllHeads(
  dims: AttentionDims, q: Float32Array, qRow0: number, k: Float32Array, v: Float32Array, kRow0: number, ctx: number,
  out: Float32Array, outRow0: number, lse_HL: Float32Array | null, lseOffset: number,
): void {
  const { nHeads, headDim } = dims;
  const W = nHeads * headDim;
  const scale = 1 / Math.sqrt(headDim);
  if (scratchQ.length < nHeads * W) {
    scratchQ = new Float32Array(nHeads * W);
    scratchO = new Float32Array(nHeads * W);
  }
  const Qbd = scratchQ, O = scratchO;
  Qbd.fill(0, 0, nHeads * W);
  for (let h = 0; h < nHeads; h++) {
    const src = qRow0 * W + h * headDim;
    Qbd.set(q.subarray(src, src + headDim), h * W + h * headDim);
  }
  const [S] = scratch(nHeads * ctx);
  sgemm(false, true, nHeads, ctx, W, scale, Qbd, 0, W, k, kRow0 * W, W, 0, S, 0, ctx);
  softmaxRows(S, 0, nHeads, ctx, ctx, 0, 1, lse_HL, lseOffset);
  sgemm(false, false, nHeads, W, ctx, 1, S, 0, ctx, v, kRow0 * W, W, 0, O, 0, W);
  for (let h = 0; h < nHeads; h++) {
    const o = h * W + h * headDim;
    out.set(O.subarray(o, o + headDim), outRow0 * W + h * headDim);
  }
}

/**
 * One decoded token of a grouped-query model against its cache: the query heads of a key/value group
 * sit side by side in the token's row and read the same keys and values, so the group's scores are one
 * product [group, headDim] · Kᵀ and its outputs one product P · V, two sgemm calls per group instead of
 * two per head (SmolLM2-135M: 9 query heads on 3 key/value heads, 3× fewer calls; at one query row the
 * calls cost more in overhead than in arithmetic). Heads [h0, h1) must cover whole groups.
 */
function attentionDecodeGroups(
  dims: AttentionDims, q: Float32Array, qRow0: number, k: Float32Array, v: Float32Array, kRow0: number, ctx: number,
  out: Float32Array, outRow0: number, lse_HL: Float32Array | null, lseOffset: number, h0: number, h1: number,
): void {
  const { nHeads, nKvHeads, headDim } = dims;
  const qStride = nHeads * headDim, kvStride = nKvHeads * headDim;
  const group = nHeads / nKvHeads;
  const scale = 1 / Math.sqrt(headDim);
  if (h0 % group !== 0 || h1 % group !== 0) throw new Error(`attentionForward: heads [${h0}, ${h1}) do not cover whole groups of ${group}`);
  const [S] = scratch(group * ctx);
  for (let g = h0 / group; g < h1 / group; g++) {
    const hs = g * group;
    sgemm(false, true, group, ctx, headDim, scale, q, qRow0 * qStride + hs * headDim, headDim,
      k, kRow0 * kvStride + g * headDim, kvStride, 0, S, 0, ctx);
    softmaxRows(S, 0, group, ctx, ctx, 0, 1, lse_HL, lseOffset + hs);
    sgemm(false, false, group, headDim, ctx, 1, S, 0, ctx, v, kRow0 * kvStride + g * headDim, kvStride,
      0, out, outRow0 * qStride + hs * headDim, headDim);
  }
}

/**
 * Small attention blocks (decoding a token against a short cache): plain loops. Below this many
 * multiply-adds per head, the two sgemm calls per head cost more in call overhead (koffi, BLAS
 * set-up, ~2-5 µs) than the products themselves (measured on the demo and bench models).
 */
const SMALL_ATTENTION_MACS = 4096;

function attentionForwardLoops(
  dims: AttentionDims, q: Float32Array, qRow0: number, Lq: number, k: Float32Array, v: Float32Array, kRow0: number, past: number,
  out: Float32Array, outRow0: number, lse_HL: Float32Array | null, lseOffset: number, S: Float32Array,
  probs_HLL: Float32Array | null, probsOffset: number, h0: number, h1: number,
): void {
  const { nHeads, nKvHeads, headDim } = dims;
  const qStride = nHeads * headDim, kvStride = nKvHeads * headDim;
  const group = nHeads / nKvHeads;
  const scale = 1 / Math.sqrt(headDim);
  for (let i = 0; i < Lq; i++) {
    const visible = past + i + 1;
    for (let h = h0; h < h1; h++) {
      const g = Math.floor(h / group);
      const qo = (qRow0 + i) * qStride + h * headDim;
      let max = -Infinity;
      for (let j = 0; j < visible; j++) {
        const ko = (kRow0 + j) * kvStride + g * headDim;
        let dot = 0;
        for (let c = 0; c < headDim; c++) dot += q[qo + c]! * k[ko + c]!;
        const sc = Math.fround(dot * scale);
        S[j] = sc;
        if (sc > max) max = sc;
      }
      let sum = 0;
      for (let j = 0; j < visible; j++) {
        const e = fastExp(S[j]! - max);
        S[j] = e;
        sum += e;
      }
      const inv = 1 / sum;
      const oo = (outRow0 + i) * qStride + h * headDim;
      for (let c = 0; c < headDim; c++) out[oo + c] = 0;
      for (let j = 0; j < visible; j++) {
        const p = S[j]! * inv, vo = (kRow0 + j) * kvStride + g * headDim;
        for (let c = 0; c < headDim; c++) out[oo + c]! += p * v[vo + c]!;
      }
      if (probs_HLL) {
        // past = 0 here, so the context is Lq wide.
        const po = probsOffset + (h * Lq + i) * Lq;
        for (let j = 0; j < visible; j++) probs_HLL[po + j] = S[j]! * inv;
        probs_HLL.fill(0, po + visible, po + Lq);
      }
      if (lse_HL) lse_HL[lseOffset + h * Lq + i] = max + Math.log(sum);
    }
  }
}

/**
 * Backward of a full causal pass (past = 0, T tokens at row0 of every buffer).
 * dq rows are overwritten; dk and dv rows are accumulated into (zero them first).
 * probs_HLL: the probabilities kept by attentionForward (from probsOffset), or null to recompute them from lse.
 * Only query heads [h0, h1) are processed; for grouped-query attention a range should cover whole
 * groups when ranges run concurrently (the heads of a group accumulate into the same dk and dv).
 */
export function attentionBackward(
  dims: AttentionDims, T: number, row0: number,
  q: Float32Array, k: Float32Array, v: Float32Array, lse_HL: Float32Array, lseOffset: number,
  dout: Float32Array, dq: Float32Array, dk: Float32Array, dv: Float32Array,
  probs_HLL: Float32Array | null = null, probsOffset = 0, h0 = 0, h1 = dims.nHeads,
): void {
  const { nHeads, nKvHeads, headDim } = dims;
  const qStride = nHeads * headDim, kvStride = nKvHeads * headDim;
  const group = nHeads / nKvHeads;
  const scale = 1 / Math.sqrt(headDim);
  const [scratchP, dP] = scratch(T * T);
  const blocks = causalBlocks(T);
  for (let h = h0; h < h1; h++) {
    const g = Math.floor(h / group);
    const qOff = row0 * qStride + h * headDim, kvOff = row0 * kvStride + g * headDim;
    let P = scratchP;
    if (probs_HLL) {
      P = probs_HLL.subarray(probsOffset + h * T * T, probsOffset + (h + 1) * T * T);
    } else {
      for (const [r0, r1] of blocks) sgemm(false, true, r1 - r0, r1, headDim, scale, q, qOff + r0 * qStride, qStride, k, kvOff, kvStride, 0, P, r0 * T, T);
      for (let i = 0; i < T; i++) {
        const row = i * T, lse = lse_HL[lseOffset + h * T + i]!;
        for (let j = 0; j <= i; j++) P[row + j] = fastExp(P[row + j]! - lse);
        for (let j = i + 1; j < T; j++) P[row + j] = 0;
      }
    }
    // Per block of query rows [r0, r1), over the keys [0, r1) it sees:
    // dP = dO · Vᵀ ; dV += Pᵀ · dO
    for (const [r0, r1] of blocks) {
      sgemm(false, true, r1 - r0, r1, headDim, 1, dout, qOff + r0 * qStride, qStride, v, kvOff, kvStride, 0, dP, r0 * T, T);
      sgemm(true, false, r1, headDim, r1 - r0, 1, P, r0 * T, T, dout, qOff + r0 * qStride, qStride, 1, dv, kvOff, kvStride);
    }
    // dS = P ⊙ (dP − Σ_j P·dP), stored in dP
    softmaxRowsBackward(P, 0, dP, 0, T, T, 1, 1);
    // dQ = scale · dS · K ; dK += scale · dSᵀ · Q
    for (const [r0, r1] of blocks) {
      sgemm(false, false, r1 - r0, headDim, r1, scale, dP, r0 * T, T, k, kvOff, kvStride, 0, dq, qOff + r0 * qStride, qStride);
      sgemm(true, false, r1, headDim, r1 - r0, scale, dP, r0 * T, T, q, qOff + r0 * qStride, qStride, 1, dk, kvOff, kvStride);
    }
  }
}
