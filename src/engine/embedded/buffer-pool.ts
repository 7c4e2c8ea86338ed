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
//
// Every pass larger than any before (RL steps differ in token count) used to allocate a new set of
// buffers and keep the old, smaller set for good: measured with bench/memory-growth.ts on
// SmolLM2-135M, the pool held 1.6 GB free after a pass of 1,658 tokens and 4.1 GB after one of 1,732
// (docs/performance.md, "Memory"). Two rules bound it. A new buffer is allocated with a quarter more
// room than its request (HEADROOM), so the next pass a little larger reuses it instead of adding its
// own. And stale buffers are dropped: a free buffer is stale when the requests
// since its release add up to more than twice what the pool holds (free and handed out): a pass that
// repeats takes about what the pool holds, so a buffer no pass has wanted for two of them is one no
// pass of the current shape uses. A request that finds no buffer to reuse drops the stale ones before
// it allocates (passes of one shape never miss, so they never drop anything: no churn). Their memory
// is freed once both threads' collectors have let go of them (thread-pool.ts).
const freeByClass = new Map<number, SharedArrayBuffer[]>();
/** Free buffers, each with `requestedBytes` at its release, in release order (a Map keeps insertion order). */
const freeBuffers = new Map<SharedArrayBuffer, number>();
/** The buffer under each view handed out and not yet returned. */
const handedOut = new WeakMap<Float32Array, SharedArrayBuffer>();
/** Views already returned: a second release is a bug (two users of one buffer). */
const returned = new WeakSet<Float32Array>();
let pooledBytes = 0;
/** A new buffer's size over its request's: passes within 25% more tokens reuse it. */
const HEADROOM = 1.25;
/** Bytes of the pool's buffers handed out and not yet returned. */
let liveBytes = 0;
/** Bytes of every pool request so far (reused or new): the clock staleness is measured by. */
let requestedBytes = 0;
let droppedBytes = 0;

/** Drops the free buffers released before the last 2 × (what the pool holds) bytes of requests. */
function dropStale(): void {
  const horizon = 2 * (pooledBytes + liveBytes);
  for (const [buffer, releasedAt] of freeBuffers) {
    if (requestedBytes - releasedAt <= horizon) break; // release order: the rest are more recent
    freeBuffers.delete(buffer);
    const list = freeByClass.get(buffer.byteLength)!;
    list.splice(list.indexOf(buffer), 1);
    pooledBytes -= buffer.byteLength;
    droppedBytes += buffer.byteLength;
  }
}

/** A Float32Array of exactly n elements, contents unspecified (see the file header). */
export function takeBuffer(n: number): Float32Array {
  // Every size from the arena (small pass buffers are operands of split products too, when decoding).
  const fromArena = simdKernels()?.arena?.take(n);
  if (fromArena) return fromArena;
  return takeSharedBuffer(n);
}

/**
 * Like takeBuffer, but never from the WebAssembly arena: for large buffers no SIMD kernel works on in
 * place (the sampling key/value cache, kv-cache.ts), which would otherwise crowd the pass buffers out
 * of the arena. Released with releaseBuffers.
 */
export function takeSharedBuffer(n: number): Float32Array {
  if (n < MIN_POOLED_LENGTH) return sharedFloats(n);
  const bytes = sizeClassBytes(n * 4);
  requestedBytes += bytes;
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
  } else {
    if (pooledBytes > 0) dropStale();
    buffer = new SharedArrayBuffer(sizeClassBytes(Math.ceil(bytes * HEADROOM)));
  }
  liveBytes += buffer.byteLength;
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
    freeBuffers.set(buffer, requestedBytes);
    liveBytes -= buffer.byteLength;
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

/** Bytes of stale free buffers dropped so far (see the file header). */
export function droppedBufferBytes(): number {
  return droppedBytes;
}
