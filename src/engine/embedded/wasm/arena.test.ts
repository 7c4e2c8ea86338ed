import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WasmArena, sizeClassBytes } from './arena.ts';
import { simdKernels } from './simd.ts';
import { releaseBuffers, takeBuffer } from '../buffer-pool.ts';

test('size classes: at least 64 KB, eight per power of two, multiples of 16 bytes, never smaller than asked', () => {
  assert.equal(sizeClassBytes(4), 1 << 16);
  assert.equal(sizeClassBytes(1 << 20), 1 << 20);
  assert.equal(sizeClassBytes((1 << 20) + 1), (1 << 20) + (1 << 17));
  for (const b of [65537, 100_000, 4_000_003, 123_456_789]) {
    const c = sizeClassBytes(b);
    assert.ok(c >= b && c < b * 1.125 + 16 && c % 16 === 0, `${b} -> ${c}`);
  }
});

test('arena: blocks are reused by size class, full arenas say so, double releases throw, views are not blocks', () => {
  const mem = new WebAssembly.Memory({ initial: 8 }); // 512 KB
  const arena = new WasmArena(mem, 65536, 8 * 65536);
  const a = arena.take(20_000)!; // 80,000 bytes -> the 81,920-byte class
  assert.equal(a.length, 20_000);
  assert.ok(arena.isBlock(a) && a.buffer === mem.buffer);
  assert.equal(a.byteOffset, 65536);
  assert.equal(arena.release(a.subarray(0, 10)), false, 'a view into a block is not a block');
  assert.equal(arena.release(a), true);
  assert.throws(() => arena.release(a), /released twice/);
  const b = arena.take(19_000)!; // same class: same block
  assert.equal(b.byteOffset, a.byteOffset);
  assert.equal(arena.isBlock(a), false, 'the old view no longer owns the block');
  const rest: Float32Array[] = [];
  for (let t = arena.take(65536 / 4); t; t = arena.take(65536 / 4)) rest.push(t);
  assert.equal(rest.length, Math.floor((8 * 65536 - 65536 - 81920) / 65536));
  assert.equal(arena.take(16), null, 'full');
  assert.equal(arena.release(new Float32Array(16)), false, 'foreign arrays are not the arena\'s');
  arena.release(rest[0]!);
  assert.ok(arena.take(100), 'a released block serves a smaller request of its class');
  assert.deepEqual(arena.usage().capacityBytes, 8 * 65536);
});

test('arena: a request whose class has no free block takes the smallest free block up to twice its size', () => {
  const mem = new WebAssembly.Memory({ initial: 40 }); // 2.5 MB
  const arena = new WasmArena(mem, 0, 40 * 65536);
  const big = arena.take(300_000)!; // 1,200,000 bytes -> the 1,310,720-byte class
  const mid = arena.take(200_000)!; // 800,000 bytes -> the 851,968-byte class
  arena.release(big);
  arena.release(mid);
  const a = arena.take(170_000)!; // 680,000 bytes -> 720,896: none free; 851,968 is the smallest free within 2x
  assert.equal(a.byteOffset, mid.byteOffset);
  const b = arena.take(100_000)!; // 400,000 bytes -> 425,984: the big block is past twice that, so a new block
  assert.notEqual(b.byteOffset, big.byteOffset);
  assert.equal(b.byteOffset, 1_310_720 + 851_968);
  const c = arena.take(250_000)!; // 1,000,000 bytes -> 1,048,576: the big block is within 2x
  assert.equal(c.byteOffset, big.byteOffset);
  arena.release(a);
  assert.equal(arena.take(200_000)!.byteOffset, mid.byteOffset, 'a block goes back to its own class');
});

test('takeBuffer hands out arena blocks (the SIMD kernels then work in place) and reuses them after release', () => {
  const simd = simdKernels();
  assert.ok(simd?.arena, 'the arena is on by default');
  const n = 262_144;
  const a = takeBuffer(n);
  assert.ok(simd.arena.isBlock(a));
  const offset = a.byteOffset;
  releaseBuffers(a);
  assert.throws(() => releaseBuffers(a), /released twice/);
  const b = takeBuffer(n - 1000);
  assert.equal(b.byteOffset, offset);
  assert.equal(b.buffer, a.buffer);
  releaseBuffers(b);
});

test('small buffers come from the arena too, so the pool can split the products of a decoding step', () => {
  const simd = simdKernels()!;
  const small = takeBuffer(32 * 64); // a 32-row decode step's activation of a small model
  assert.ok(simd.arena!.isBlock(small));
  assert.equal(small.buffer, simd.memory.buffer);
  releaseBuffers(small);
});

test('a retained forward holds arena blocks until its backward or releaseGraph returns them', async () => {
  const arena = simdKernels()!.arena!;
  const { createEngine } = await import('../../index.ts');
  const cfg = { architecture: 'llama' as const, vocabSize: 500, hiddenSize: 64, intermediateSize: 192, numHiddenLayers: 2, numAttentionHeads: 4,
    numKeyValueHeads: 4, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 512, tieWordEmbeddings: false,
    attentionBias: false, qkNorm: false, bosTokenId: null, eosTokenIds: [] };
  const e = createEngine(cfg, { seed: 1 });
  await e.setBaseTrainable(true);
  const batch = [{ tokens: Array.from({ length: 400 }, (_, i) => (i * 37) % 500), scoreFrom: 1 }];
  await e.forward({ kind: 'base' }, batch, {}); // warm-up: the attention scratch stays taken
  const before = arena.usage().liveBytes;
  const f = await e.forward({ kind: 'base' }, batch, { retainGraph: true });
  assert.ok(arena.usage().liveBytes > before + (1 << 20), 'the retained activations live in the arena');
  (e as unknown as { releaseGraph(h: unknown): void }).releaseGraph(f.handle);
  assert.equal(arena.usage().liveBytes, before);
  const g = await e.forward({ kind: 'base' }, batch, { retainGraph: true });
  await e.backward(g.handle!, { dLogprobs: g.logprobs!.map((x) => new Float32Array(x.length).fill(-0.01)) });
  assert.equal(arena.usage().liveBytes, before);
});
