// The pool of shared buffers outside the arena, with the WebAssembly arena turned off (set before the
// modules load; node:test runs each file in its own process). The arena itself: wasm/arena.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';

process.env.MARFT_WASM_ARENA_MB = '0';
const { droppedBufferBytes, pooledBufferBytes, releaseBuffers, takeBuffer } = await import('./buffer-pool.ts');
const { sizeClassBytes } = await import('./wasm/arena.ts');

/** The size a new buffer for n floats is allocated at: a quarter more than its class, rounded to a class. */
const allocated = (n: number) => sizeClassBytes(Math.ceil(sizeClassBytes(n * 4) * 1.25));

test('buffer pool: shared buffers; a released one comes back for its size class (up to twice the size), small and foreign arrays are not pooled', () => {
  const n = 1 << 15;
  const a = takeBuffer(n);
  assert.equal(a.length, n);
  assert.ok(a.buffer instanceof SharedArrayBuffer, 'workers can see it');
  assert.equal(a.buffer.byteLength, allocated(n));
  const before = pooledBufferBytes();
  releaseBuffers(a, null, undefined);
  assert.equal(pooledBufferBytes(), before + a.buffer.byteLength);
  const again = takeBuffer(n - 5); // same class: the same memory, a new view of its length
  assert.equal(again.buffer, a.buffer);
  assert.equal(again.length, n - 5);
  assert.equal(pooledBufferBytes(), before);
  assert.notEqual(takeBuffer(n).buffer, a.buffer); // the pool had only one of that class
  releaseBuffers(again);
  const half = takeBuffer(Math.ceil(allocated(n) / 8) + 1000); // a free buffer up to twice the size serves a smaller class
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

test('buffer pool: a new buffer has a quarter more room, so a pass up to 25% larger reuses it instead of adding its own', () => {
  const n = 1 << 18;
  const first = takeBuffer(n);
  releaseBuffers(first);
  const larger = takeBuffer(Math.floor(n * 1.2));
  assert.equal(larger.buffer, first.buffer, '20% more floats: the same memory');
  releaseBuffers(larger);
  const much = takeBuffer(n * 2);
  assert.notEqual(much.buffer, first.buffer, 'twice the floats: a buffer of its own');
  releaseBuffers(much);
});

test('buffer pool: free buffers that no request has wanted for twice the pool\'s size of requests are dropped at the next miss; a repeating pass drops nothing', () => {
  // A repeating pass: the same three sizes, taken and released, many times over: all reused, nothing dropped.
  const sizes = [1 << 16, 3 << 16, 5 << 16];
  const droppedBefore = droppedBufferBytes();
  const pass = () => {
    const views = sizes.map((n) => takeBuffer(n));
    releaseBuffers(...views);
    return views.map((v) => v.buffer);
  };
  const buffers = pass();
  for (let k = 0; k < 20; k++) assert.deepEqual(pass(), buffers, `pass ${k}: the same buffers`);
  assert.equal(droppedBufferBytes(), droppedBefore, 'nothing dropped');
  const held = pooledBufferBytes();
  // Passes of another shape (8x larger: no free buffer is within twice their sizes): after enough of
  // them, the old set is stale and the next miss drops it.
  const bigger = sizes.map((n) => 8 * n);
  let bigSet: ArrayBufferLike[] = [];
  const big = () => {
    const views = bigger.map((n) => takeBuffer(n));
    releaseBuffers(...views);
    bigSet = views.map((v) => v.buffer);
  };
  for (let k = 0; k < 30; k++) big();
  assert.ok(pooledBufferBytes() > held, 'the larger set is held beside the old one until a miss');
  assert.equal(droppedBufferBytes(), droppedBefore, 'passes that reuse their buffers drop nothing, however long');
  releaseBuffers(takeBuffer(256 << 16)); // a miss: stale buffers go
  assert.ok(droppedBufferBytes() - droppedBefore >= buffers.reduce((s, b) => s + b.byteLength, 0), 'at least the old set was dropped');
  const again = bigger.map((n) => takeBuffer(n));
  assert.deepEqual(again.map((v) => v.buffer), bigSet, 'the set in use is kept');
  releaseBuffers(...again);
  const old = sizes.map((n) => takeBuffer(n));
  for (const v of old) assert.ok(!buffers.includes(v.buffer), 'the dropped buffers never come back');
  releaseBuffers(...old);
});
