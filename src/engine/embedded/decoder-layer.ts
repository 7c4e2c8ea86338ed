// One pre-norm decoder layer (Llama / Qwen2 / Qwen3) over packed rows, and its backward:
//   x2 = x + o_proj(attn(rope(qk_norm(q_proj(n1))), rope(qk_norm(k_proj(n1))), v_proj(n1))),  n1 = rmsnorm(x)
//   x3 = x2 + down_proj(silu(gate_proj(n2)) ⊙ up_proj(n2)),                                   n2 = rmsnorm(x2)
import type { LinearModule, ModelConfig } from '../types.ts';
import type { LayerWeights } from './weights.ts';
import type { LoraModule } from './lora.ts';
import { linearBackward, linearForward, type LinearOp } from './linear.ts';
import { rmsnormBackward, rmsnormForward } from './kernels/rmsnorm.ts';
import { ropeBackward, ropeForward, type RopeTable } from './kernels/rope.ts';
import { swigluBackwardRows, swigluForwardRows } from './row-jobs.ts';
import type { AttentionDims } from './kernels/attention.ts';
import { attentionPoolJob } from './attention-jobs.ts';
import { runJob } from './thread-pool.ts';
import type { KvCache } from './kv-cache.ts';
import { ensureGrad } from './param.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';
import { withOneBlasThread } from './blas.ts';

/** One sequence inside a packed batch: rows [row0, row0+len) hold its new tokens at positions past … past+len−1. */
export interface SeqSpan {
  row0: number;
  len: number;
  past: number;
  /** KV-cache slot when decoding with a cache. */
  slot: number;
}

export interface PassSetup {
  cfg: ModelConfig;
  rope: RopeTable;
  seqs: SeqSpan[];
  /** Total packed rows. */
  N: number;
  cache: KvCache | null;
}

/** What the backward needs from the forward (kept only when the graph is retained). */
export interface LayerActs {
  x: Float32Array;
  n1: Float32Array; rstd1: Float32Array;
  qPre: Float32Array | null; kPre: Float32Array | null; rstdQ: Float32Array | null; rstdK: Float32Array | null;
  q: Float32Array; k: Float32Array; v: Float32Array;
  lse: Float32Array;
  /** Attention probabilities [nHeads, len, len] of each sequence in turn, or null (recomputed from lse). */
  probs: Float32Array | null;
  attn: Float32Array;
  x2: Float32Array;
  n2: Float32Array; rstd2: Float32Array;
  g: Float32Array; u: Float32Array; h: Float32Array;
  /** σ(g), for the SwiGLU backward. */
  sig: Float32Array | null;
  xa: Partial<Record<LinearModule, Float32Array | null>>;
}

export type LayerLora = Partial<Record<LinearModule, LoraModule>> | null;

function op(w: LayerWeights, lora: LayerLora, scale: number, m: LinearModule): LinearOp {
  const bias = m === 'q_proj' || m === 'k_proj' || m === 'v_proj' ? w.biases[m] ?? null : null;
  return { W: w.linears[m], bias, lora: lora?.[m] ?? null, scale };
}

function dims(cfg: ModelConfig): AttentionDims {
  return { nHeads: cfg.numAttentionHeads, nKvHeads: cfg.numKeyValueHeads, headDim: cfg.headDim };
}

export function layerForward(
  s: PassSetup, layerIndex: number, w: LayerWeights, lora: LayerLora, scale: number, x: Float32Array, retain: boolean,
): { out: Float32Array; acts: LayerActs } {
  const { cfg, N } = s;
  const H = cfg.hiddenSize, I = cfg.intermediateSize, hd = cfg.headDim;
  const nH = cfg.numAttentionHeads, nKv = cfg.numKeyValueHeads;
  const qDim = nH * hd, kvDim = nKv * hd;
  const xa: LayerActs['xa'] = {};

  const n1 = takeBuffer(N * H), rstd1 = new Float32Array(N);
  rmsnormForward(x, w.inputNorm.data, n1, rstd1, N, H, cfg.rmsNormEps);
  let q = takeBuffer(N * qDim), k = takeBuffer(N * kvDim);
  const v = takeBuffer(N * kvDim);
  xa.q_proj = linearForward(op(w, lora, scale, 'q_proj'), n1, N, q);
  xa.k_proj = linearForward(op(w, lora, scale, 'k_proj'), n1, N, k);
  xa.v_proj = linearForward(op(w, lora, scale, 'v_proj'), n1, N, v);

  let qPre: Float32Array | null = null, kPre: Float32Array | null = null;
  let rstdQ: Float32Array | null = null, rstdK: Float32Array | null = null;
  if (w.qNorm && w.kNorm) {
    qPre = q; kPre = k;
    q = takeBuffer(N * qDim); k = takeBuffer(N * kvDim);
    rstdQ = new Float32Array(N * nH); rstdK = new Float32Array(N * nKv);
    rmsnormForward(qPre, w.qNorm.data, q, rstdQ, N * nH, hd, cfg.rmsNormEps);
    rmsnormForward(kPre, w.kNorm.data, k, rstdK, N * nKv, hd, cfg.rmsNormEps);
  }
  for (const seq of s.seqs) {
    ropeForward(q, seq.row0, seq.len, nH, seq.past, s.rope);
    ropeForward(k, seq.row0, seq.len, nKv, seq.past, s.rope);
  }

  const attn = takeBuffer(N * qDim);
  // From the pool (shared memory), not a small ordinary array: the pool's workers write it.
  const lse = takeBuffer(N * nH);
  const probs = retain && !s.cache ? keptProbsBuffer(s.seqs, nH, N * I) : null;
  const d = dims(cfg);
  withOneBlasThread(() => {
    const cache = s.cache;
    if (!cache) {
      runJob(attentionPoolJob({ kind: 'forward', dims: d, seqs: s.seqs, q, k, v, out: attn, lse, probs }));
      return;
    }
    // Sampling: the new keys and values into each sequence's slot, then attention over the slots,
    // split across the pool's threads like an uncached pass (the cache is shared memory, kv-cache.ts).
    for (const seq of s.seqs) cache.write(layerIndex, seq.slot, seq.past, k, v, seq.row0, seq.len);
    const seqs = s.seqs.map((seq) => ({ row0: seq.row0, len: seq.len, past: seq.past, kRow0: cache.row0(seq.slot) }));
    runJob(attentionPoolJob({ kind: 'forward', dims: d, seqs, q, k: cache.k[layerIndex]!, v: cache.v[layerIndex]!, out: attn, lse, probs: null }));
  });

  // Residuals: the input is copied into the output and the projection adds to it (sgemm's beta = 1).
  const x2 = takeBuffer(N * H);
  x2.set(x);
  xa.o_proj = linearForward(op(w, lora, scale, 'o_proj'), attn, N, x2, true);

  const n2 = takeBuffer(N * H), rstd2 = new Float32Array(N);
  rmsnormForward(x2, w.postNorm.data, n2, rstd2, N, H, cfg.rmsNormEps);
  const g = takeBuffer(N * I), u = takeBuffer(N * I), h = takeBuffer(N * I);
  xa.gate_proj = linearForward(op(w, lora, scale, 'gate_proj'), n2, N, g);
  xa.up_proj = linearForward(op(w, lora, scale, 'up_proj'), n2, N, u);
  const sig = retain ? takeBuffer(N * I) : null;
  swigluForwardRows(g, u, h, N * I, sig);
  const out = takeBuffer(N * H);
  out.set(x2);
  xa.down_proj = linearForward(op(w, lora, scale, 'down_proj'), h, N, out, true);

  return { out, acts: { x, n1, rstd1, qPre, kPre, rstdQ, rstdK, q, k, v, lse, probs, attn, x2, n2, rstd2, g, u, h, sig, xa } };
}

/**
 * Room for the attention probabilities of a retained pass, so the backward need not recompute them
 * (one Q·Kᵀ product and one exp per score fewer), when they take no more than `budget` floats; the
 * caller passes the size of one FFN activation [N, I], so memory grows by at most about a fifth.
 * Long sequences (T² · heads past that) recompute them instead.
 */
function keptProbsBuffer(seqs: SeqSpan[], nHeads: number, budget: number): Float32Array | null {
  let size = 0;
  for (const seq of seqs) size += nHeads * seq.len * seq.len;
  return size <= budget ? takeBuffer(size) : null;
}

/** Returns a layer's activations (its input x included) to the buffer pool; they must not be used afterwards. */
export function releaseLayerActs(a: LayerActs): void {
  releaseBuffers(a.x, a.n1, a.qPre, a.kPre, a.q, a.k, a.v, a.lse, a.probs, a.attn, a.x2, a.n2, a.g, a.u, a.h, a.sig, ...Object.values(a.xa));
}

/** Which parameter gradients this backward accumulates. */
export interface GradTargets {
  base: boolean;
  lora: boolean;
  /** Whether dL/dx of the layer input is needed (false for the first layer of a frozen-base LoRA pass). */
  needDx: boolean;
}

/** Allocates the gradient buffers the targets will write into. */
export function prepareLayerGrads(w: LayerWeights, lora: LayerLora, t: GradTargets): void {
  if (t.base) {
    ensureGrad(w.inputNorm); ensureGrad(w.postNorm);
    for (const p of Object.values(w.linears)) ensureGrad(p);
    for (const p of Object.values(w.biases)) ensureGrad(p);
    if (w.qNorm) ensureGrad(w.qNorm);
    if (w.kNorm) ensureGrad(w.kNorm);
  }
  if (t.lora && lora) for (const m of Object.values(lora)) { ensureGrad(m.A); ensureGrad(m.B); }
}

/** Scratch buffers of one backward pass, shared by its layers (every layer has the same shapes). */
export interface LayerWorkspace {
  dh: Float32Array; dg: Float32Array; du: Float32Array;
  dn1: Float32Array; dn2: Float32Array;
  dattn: Float32Array; dq: Float32Array; dk: Float32Array; dv: Float32Array;
  dqPre: Float32Array | null; dkPre: Float32Array | null;
}

export function createLayerWorkspace(cfg: ModelConfig, N: number): LayerWorkspace {
  const H = cfg.hiddenSize, I = cfg.intermediateSize;
  const qDim = cfg.numAttentionHeads * cfg.headDim, kvDim = cfg.numKeyValueHeads * cfg.headDim;
  return {
    dh: takeBuffer(N * I), dg: takeBuffer(N * I), du: takeBuffer(N * I),
    dn1: takeBuffer(N * H), dn2: takeBuffer(N * H),
    dattn: takeBuffer(N * qDim), dq: takeBuffer(N * qDim), dk: takeBuffer(N * kvDim), dv: takeBuffer(N * kvDim),
    dqPre: cfg.qkNorm ? takeBuffer(N * qDim) : null, dkPre: cfg.qkNorm ? takeBuffer(N * kvDim) : null,
  };
}

export function releaseLayerWorkspace(ws: LayerWorkspace): void {
  releaseBuffers(ws.dh, ws.dg, ws.du, ws.dn1, ws.dn2, ws.dattn, ws.dq, ws.dk, ws.dv, ws.dqPre, ws.dkPre);
}

/**
 * dOut [N, H] → dL/dx [N, H] written into dxOut (a different buffer), or null when not needed.
 * Training passes only (no cache, past = 0). Every workspace buffer is fully overwritten before use.
 */
export function layerBackward(
  s: PassSetup, w: LayerWeights, lora: LayerLora, scale: number, a: LayerActs, dOut: Float32Array, t: GradTargets,
  ws: LayerWorkspace, dxOut: Float32Array,
): Float32Array | null {
  const { cfg, N } = s;
  const H = cfg.hiddenSize, I = cfg.intermediateSize, hd = cfg.headDim;
  const nH = cfg.numAttentionHeads, nKv = cfg.numKeyValueHeads;
  const lt = { base: t.base, lora: t.lora };

  // MLP branch; the residual passes dOut straight to x2.
  const { dh, dg, du, dn2, dattn, dq, dk, dv, dn1 } = ws;
  linearBackward(op(w, lora, scale, 'down_proj'), a.h, a.xa.down_proj ?? null, dOut, N, dh, false, lt);
  swigluBackwardRows(dh, a.g, a.u, a.sig!, dg, du, N * I);
  linearBackward(op(w, lora, scale, 'gate_proj'), a.n2, a.xa.gate_proj ?? null, dg, N, dn2, false, lt);
  linearBackward(op(w, lora, scale, 'up_proj'), a.n2, a.xa.up_proj ?? null, du, N, dn2, true, lt);
  const dx2 = dxOut;
  dx2.set(dOut);
  rmsnormBackward(dn2, a.x2, w.postNorm.data, a.rstd2, dx2, t.base ? w.postNorm.grad : null, N, H, true);

  // Attention branch.
  linearBackward(op(w, lora, scale, 'o_proj'), a.attn, a.xa.o_proj ?? null, dx2, N, dattn, false, lt);
  dk.fill(0); // accumulated over the query heads of each group
  dv.fill(0);
  withOneBlasThread(() => runJob(attentionPoolJob({
    kind: 'backward', dims: dims(cfg), seqs: s.seqs, q: a.q, k: a.k, v: a.v, lse: a.lse, probs: a.probs, dout: dattn, dq, dk, dv,
  })));
  for (const seq of s.seqs) {
    ropeBackward(dq, seq.row0, seq.len, nH, 0, s.rope);
    ropeBackward(dk, seq.row0, seq.len, nKv, 0, s.rope);
  }
  let dqPre = dq, dkPre = dk;
  if (w.qNorm && w.kNorm && a.qPre && a.kPre) {
    dqPre = ws.dqPre!; dkPre = ws.dkPre!;
    rmsnormBackward(dq, a.qPre, w.qNorm.data, a.rstdQ!, dqPre, t.base ? w.qNorm.grad : null, N * nH, hd, false);
    rmsnormBackward(dk, a.kPre, w.kNorm.data, a.rstdK!, dkPre, t.base ? w.kNorm.grad : null, N * nKv, hd, false);
  }
  linearBackward(op(w, lora, scale, 'q_proj'), a.n1, a.xa.q_proj ?? null, dqPre, N, dn1, false, lt);
  linearBackward(op(w, lora, scale, 'k_proj'), a.n1, a.xa.k_proj ?? null, dkPre, N, dn1, true, lt);
  linearBackward(op(w, lora, scale, 'v_proj'), a.n1, a.xa.v_proj ?? null, dv, N, dn1, true, lt);
  if (!t.needDx && !t.base) return null;
  rmsnormBackward(dn1, a.x, w.inputNorm.data, a.rstd1, dx2, t.base ? w.inputNorm.grad : null, N, H, true);
  return dx2;
}
