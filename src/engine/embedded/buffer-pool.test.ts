// The pool of shared buffers outside the arena, with the WebAssembly arena turned off (set before the
// modules load; node:test runs each file in its own process). The arena itself: wasm/arena.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';

process.env.MARFT_WASM_ARENA_MB = '0';
const { pooledBufferBytes, releaseBuffers, takeBuffer } = await import('./buffer-pool.ts');
const { sizeClassBytes } = await import('./wasm/arena.ts');

test('buffer pool: shared buffers; a released one comes back for its size class (up to twice the size), small and foreign arrays are not pooled', () => {
  const n = 1 << 15;
  const a = takeBuffer(n);
  assert.equal(a.length, n);
  assert.ok(a.buffer instanceof SharedArrayBuffer, 'workers can see it');
  assert.equal(a.buffer.byteLength, sizeClassBytes(n * 4));
  const before = pooledBufferBytes();
  releaseBuffers(a, null, undefined);
  assert.equal(pooledBufferBytes(), before + a.buffer.byteLength);
  const again = takeBuffer(n - 5); // same class: the same memory, a new view of its length
  assert.equal(again.buffer, a.buffer);
  assert.equal(again.length, n - 5);
  assert.equal(pooledBufferBytes(), before);
  assert.notEqual(takeBuffer(n).buffer, a.buffer); // the pool had only one of that class
  releaseBuffers(again);
  const half = takeBuffer(n / 2 + 1000); // a free buffer up to twice the size serves a smaller class
  assert.equal(half.buffer, a.buffer);
  const small = takeBuffer(16);
  assert.ok(small.buffer instanceof SharedArrayBuffer);
  releaseBuffers(small, new Float32Array(2 * n));
  assert.equal(pooledBufferBytes(), before, 'small and foreign arrays are not pooled');
});

test('buffer pool: releasing the same buffer twice throws', () => {
  const b = takeBuffer((1 << 15) + 3);
  releaseBuffers(b);
  assert.throws(() => releaseBuffers(b), /released twice/);
  assert.equal(takeBuffer((1 << 15) + 3).buffer, b.buffer);
});
