// The sampling key/value cache comes from the buffer pool and goes back to it when a sample() call
// ends (src/engine/embedded/kv-cache.ts): a fresh shared buffer per call stays resident until both
// threads' collectors let go of it (one real-model bench run with that was killed for memory). Here: after a call the pool holds at least the cache's bytes, and a second call of
// the same shape takes them again instead of adding its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig } from '../../src/engine/types.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { pooledBufferBytes } from '../../src/engine/embedded/buffer-pool.ts';
import { spreadWeights } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 60, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 96, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [1],
};

test('the sampling cache returns to the buffer pool and the next call of the same shape reuses it', async () => {
  const engine = new EmbeddedEngine(cfg, spreadWeights(cfg, 5));
  // 16 sequences × 96 positions × 16 key/value floats = 24,576 floats per layer and tensor: pooled sizes.
  const prompts = Array.from({ length: 16 }, (_, i) => [3 + (i % 5), 4, 5, 6, 7, 8, 9]);
  const params = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 89, stopTokenIds: [] as number[], stopStrings: [] as string[], seed: 2 };
  const cacheBytes = 2 * cfg.numHiddenLayers * 16 * 96 * cfg.numKeyValueHeads * cfg.headDim * 4;
  const before = pooledBufferBytes();
  const first = await engine.sample({ kind: 'base' }, prompts, params);
  const afterFirst = pooledBufferBytes();
  assert.ok(afterFirst - before >= cacheBytes, `the pool gained ${afterFirst - before} bytes, the cache is ${cacheBytes}`);
  const second = await engine.sample({ kind: 'base' }, prompts, params);
  assert.equal(pooledBufferBytes(), afterFirst, 'a second call of the same shape adds no buffers');
  assert.deepEqual(second.map((r) => r.tokens), first.map((r) => r.tokens), 'a reused cache (contents unspecified) gives the same samples');
  await engine.dispose();
});
