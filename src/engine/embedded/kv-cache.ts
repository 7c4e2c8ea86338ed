// Keys and values of past tokens for incremental decoding: per layer, [slots, maxCtx, nKvHeads·headDim].
// Each sequence of a sampling batch owns one slot; keys are stored after RoPE, so decoding a new token
// only computes its own projections.
import type { ModelConfig } from '../types.ts';
import { releaseBuffers, takeSharedBuffer } from './buffer-pool.ts';

export class KvCache {
  readonly k: Float32Array[];
  readonly v: Float32Array[];
  readonly kvStride: number;
  constructor(cfg: ModelConfig, readonly slots: number, readonly maxCtx: number) {
    this.kvStride = cfg.numKeyValueHeads * cfg.headDim;
    const size = slots * maxCtx * this.kvStride;
    // Shared memory, since the pool's threads read the slots (attention-jobs.ts), and from the buffer
    // pool, reused by the next sampling call: a fresh SharedArrayBuffer per call stays resident until
    // both threads' collectors have let go of it (thread-pool.ts). With a fresh cache per call one run
    // of the real-model bench was killed for memory (the marft process at 12.9 GB after its sampling
    // workloads); with the pooled cache the next run finished. Contents unspecified: attention reads
    // only positions already written.
    this.k = Array.from({ length: cfg.numHiddenLayers }, () => takeSharedBuffer(size));
    this.v = Array.from({ length: cfg.numHiddenLayers }, () => takeSharedBuffer(size));
  }

  /** Copies `len` rows of new keys/values (from row `srcRow0` of k/v) into `slot` at positions past … past+len−1. */
  write(layer: number, slot: number, past: number, k: Float32Array, v: Float32Array, srcRow0: number, len: number): void {
    if (past + len > this.maxCtx) throw new Error(`KV cache overflow: ${past + len} > ${this.maxCtx}`);
    const s = this.kvStride, dst = (slot * this.maxCtx + past) * s;
    this.k[layer]!.set(k.subarray(srcRow0 * s, (srcRow0 + len) * s), dst);
    this.v[layer]!.set(v.subarray(srcRow0 * s, (srcRow0 + len) * s), dst);
  }

  /** Copies the first `len` positions of slot `from` into slot `to` in every layer (a shared prompt's keys and values). */
  copySlot(from: number, to: number, len: number): void {
    const n = len * this.kvStride, src = this.row0(from) * this.kvStride, dst = this.row0(to) * this.kvStride;
    for (let l = 0; l < this.k.length; l++) {
      this.k[l]!.copyWithin(dst, src, src + n);
      this.v[l]!.copyWithin(dst, src, src + n);
    }
  }

  /** Returns the buffers to the pool; the cache must not be used afterwards. */
  release(): void {
    releaseBuffers(...this.k, ...this.v);
  }

  /** Row index of a slot's first position, for attentionForward's kRow0. */
  row0(slot: number): number {
    return slot * this.maxCtx;
  }
}
