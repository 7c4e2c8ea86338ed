// The pool of ordinary arrays, with the WebAssembly arena turned off (set before the modules load;
// node:test runs each file in its own process). The arena itself: wasm/arena.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';

process.env.MARFT_WASM_ARENA_MB = '0';
const { pooledBufferBytes, releaseBuffers, takeBuffer } = await import('./buffer-pool.ts');

test('buffer pool: a released buffer comes back for the same length, small and foreign views are not pooled', () => {
  const n = 1 << 15;
  const a = takeBuffer(n);
  assert.equal(a.length, n);
  const before = pooledBufferBytes();
  releaseBuffers(a, null, undefined);
  assert.equal(pooledBufferBytes(), before + n * 4);
  assert.equal(takeBuffer(n), a); // reused, not reallocated
  assert.equal(pooledBufferBytes(), before);
  assert.notEqual(takeBuffer(n), a); // the pool had only one of that length
  const small = new Float32Array(16);
  releaseBuffers(small);
  assert.equal(pooledBufferBytes(), before);
  const big = new Float32Array(2 * n);
  releaseBuffers(big.subarray(0, n)); // a view into a larger buffer is never handed out as a whole array
  assert.equal(pooledBufferBytes(), before);
  assert.notEqual(takeBuffer(n).buffer, big.buffer);
});

test('buffer pool: releasing the same buffer twice throws', () => {
  const b = takeBuffer((1 << 15) + 3);
  releaseBuffers(b);
  assert.throws(() => releaseBuffers(b), /released twice/);
  assert.equal(takeBuffer((1 << 15) + 3), b);
});
