// Float32Arrays that the embedded engine's worker threads (embedded/thread-pool.ts) can read and
// write: their memory is a SharedArrayBuffer. That engine keeps every buffer a parallel product may
// touch in shared memory: parameters and their gradients (embedded/param.ts), checkpoint tensors as
// they are read (hf/safetensors.ts, which is why this file sits at the engine level beside the file
// formats), the pass buffers (embedded/buffer-pool.ts: the WebAssembly arena, itself a shared memory,
// or these), so that a product can be split across threads without copying. Shared memory behaves
// like ordinary memory for everything else (V8 reads and writes it the same way; koffi passes its
// address).

/** n zeros in a SharedArrayBuffer of their own. */
export function sharedFloats(n: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(n * 4));
}

/** n zero ints in a SharedArrayBuffer of their own (token ids a worker reads). */
export function sharedInts(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(n * 4));
}

/** A shared copy of a (so far) unshared array; a shared one is returned as it is. */
export function toShared(a: Float32Array): Float32Array {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = sharedFloats(a.length);
  out.set(a);
  return out;
}
