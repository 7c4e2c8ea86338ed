// Reuse of the large per-pass float32 buffers (layer activations, backward scratch, logits).
// A training step of the reference benchmark model allocates about 120 MB of them; fresh typed
// arrays that size come from mmap, so every step paid for page faults and zeroing (about 15% of
// its time was system time). Buffers go back to the pool once a pass no longer needs them (a
// non-retained forward as soon as the next layer has run, a retained one when its backward has
// consumed each layer) and come out again, same length, for the next pass.
//
// Buffers come first from the WebAssembly arena (wasm/arena.ts), where the SIMD kernels work on
// them without copying; when the arena is full or off, from shared arrays (shared-memory.ts) kept in
// the pool below. Either way the worker threads (thread-pool.ts) can use them.
//
// A buffer from takeBuffer has unspecified contents: every caller overwrites all of it before
// reading (sgemm with beta = 0, the norms and element-wise kernels write every element).

/** Arrays shorter than this are cheap to allocate and are not pooled. */
const MIN_POOLED_LENGTH = 1 << 14;
/** The pool holds at most this many bytes; past it, it is emptied (and the GC frees the arrays). */
const MAX_POOLED_BYTES = 256 * 1024 * 1024;

import { simdKernels } from './wasm/simd.ts';
import { sharedFloats } from './shared-memory.ts';

const free = new Map<number, Float32Array[]>();
let pooledBytes = 0;

/** A Float32Array of exactly n elements, contents unspecified (see the file header). */
export function takeBuffer(n: number): Float32Array {
  // Every size from the arena (small pass buffers are operands of split products too, when decoding).
  const fromArena = simdKernels()?.arena?.take(n);
  if (fromArena) return fromArena;
  if (n >= MIN_POOLED_LENGTH) {
    const list = free.get(n);
    const b = list?.pop();
    if (b) {
      pooledBytes -= b.byteLength;
      return b;
    }
  }
  return sharedFloats(n);
}

/** Hands buffers back; the caller must not use them afterwards. Nulls and small arrays are ignored. */
export function releaseBuffers(...buffers: (Float32Array | null | undefined)[]): void {
  const arena = simdKernels()?.arena;
  for (const b of buffers) {
    if (b && arena?.release(b)) continue;
    if (!b || b.length < MIN_POOLED_LENGTH || b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength || b.byteLength > MAX_POOLED_BYTES / 4) continue;
    if (pooledBytes + b.byteLength > MAX_POOLED_BYTES) {
      free.clear();
      pooledBytes = 0;
    }
    const list = free.get(b.length);
    if (list) {
      if (list.includes(b)) throw new Error('releaseBuffers: buffer released twice');
      list.push(b);
    } else free.set(b.length, [b]);
    pooledBytes += b.byteLength;
  }
}

/** Bytes currently held for reuse (tests and memory reports). */
export function pooledBufferBytes(): number {
  return pooledBytes;
}
