// Reuse of the large per-pass float32 buffers (layer activations, backward scratch, logits).
// A training step of the reference benchmark model allocates about 120 MB of them; fresh typed
// arrays that size come from mmap, so every step paid for page faults and zeroing (about 15% of
// its time was system time). Buffers go back to the pool once a pass no longer needs them (a
// non-retained forward as soon as the next layer has run, a retained one when its backward has
// consumed each layer) and come out again, same size class, for the next pass.
//
// Buffers come first from the WebAssembly arena (wasm/arena.ts), where the SIMD kernels work on
// them without copying; when the arena is full or off, from shared arrays (shareable-arrays.ts) kept in
// the pool below. Either way the worker threads (thread-pool.ts) can use them.
//
// A buffer from takeBuffer has unspecified contents: every caller overwrites all of it before
// reading (sgemm with beta = 0, the norms and element-wise kernels write every element).

/** Arrays shorter than this are cheap to allocate and are not pooled (outside the arena). */
const MIN_POOLED_LENGTH = 1 << 14;

import { simdKernels } from './wasm/simd.ts';
import { sizeClassBytes } from './wasm/arena.ts';
import { sharedFloats } from '../shareable-arrays.ts';

// Outside the arena: SharedArrayBuffers in the arena's size classes, reused from pass to pass (a
// request takes a free one of its class, or the smallest free one up to twice its size). They are
// kept, not dropped, between passes: the pool's workers hold their own handle on every buffer a job
// has used until the calling thread's collector has let go of it, so buffers dropped and reallocated
// during one synchronous pass would all stay resident to its end (a 0.5B model's 600 MB logits did).
// The pool therefore holds the high-water mark of what a pass had taken at once, as the arena does.
const freeByClass = new Map<number, SharedArrayBuffer[]>();
const freeBuffers = new Set<SharedArrayBuffer>();
/** The buffer under each view handed out and not yet returned. */
const handedOut = new WeakMap<Float32Array, SharedArrayBuffer>();
/** Views already returned: a second release is a bug (two users of one buffer). */
const returned = new WeakSet<Float32Array>();
let pooledBytes = 0;

/** A Float32Array of exactly n elements, contents unspecified (see the file header). */
export function takeBuffer(n: number): Float32Array {
  // Every size from the arena (small pass buffers are operands of split products too, when decoding).
  const fromArena = simdKernels()?.arena?.take(n);
  if (fromArena) return fromArena;
  if (n < MIN_POOLED_LENGTH) return sharedFloats(n);
  const bytes = sizeClassBytes(n * 4);
  let buffer = freeByClass.get(bytes)?.pop();
  if (!buffer) {
    for (const [cls, list] of freeByClass) {
      if (list.length > 0 && cls > bytes && cls <= 2 * bytes && (!buffer || cls < buffer.byteLength)) buffer = list[list.length - 1];
    }
    if (buffer) freeByClass.get(buffer.byteLength)!.pop();
  }
  if (buffer) {
    freeBuffers.delete(buffer);
    pooledBytes -= buffer.byteLength;
  } else buffer = new SharedArrayBuffer(bytes);
  const view = new Float32Array(buffer, 0, n);
  handedOut.set(view, buffer);
  return view;
}

/** Hands buffers back; the caller must not use them afterwards. Nulls and arrays not from takeBuffer are ignored. */
export function releaseBuffers(...buffers: (Float32Array | null | undefined)[]): void {
  const arena = simdKernels()?.arena;
  for (const b of buffers) {
    if (!b || arena?.release(b)) continue;
    if (returned.has(b)) throw new Error('releaseBuffers: buffer released twice');
    const buffer = handedOut.get(b);
    if (!buffer) continue;
    handedOut.delete(b);
    returned.add(b);
    freeBuffers.add(buffer);
    const list = freeByClass.get(buffer.byteLength);
    if (list) list.push(buffer);
    else freeByClass.set(buffer.byteLength, [buffer]);
    pooledBytes += buffer.byteLength;
  }
}

/** Bytes currently held for reuse (tests and memory reports). */
export function pooledBufferBytes(): number {
  return pooledBytes;
}
