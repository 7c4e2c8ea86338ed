// Sampling up to the model's context (max_position_embeddings): a sequence whose prompt and tokens fill
// the context stops with stopReason 'context_full', and the tokens and log-probs up to there are those of
// a scoring forward over the whole (full-context) sequence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import type { ModelConfig, SampleParams } from '../../src/engine/types.ts';
import { maxAbsDiff, spreadWeights, testSequences } from './oracle-helpers.ts';

const CONTEXT = 16;
const cfg: ModelConfig = {
  architecture: 'llama', vocabSize: 53, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: CONTEXT, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: false, bosTokenId: null, eosTokenIds: [],
};
const params: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 100, stopTokenIds: [], stopStrings: [], seed: 9 };
const base = { kind: 'base' } as const;

const randomEngine = (seed: number): EmbeddedEngine => new EmbeddedEngine(cfg, spreadWeights(cfg, seed));

test('sampling that reaches the context stops with context_full, with the full-context forward\'s log-probs (ragged batch)', async () => {
  const e = randomEngine(1);
  const prompts = testSequences(cfg.vocabSize, [3, 10, CONTEXT - 1], 5);
  for (const temperature of [1, 0]) {
    const out = await e.sample(base, prompts, { ...params, temperature });
    out.forEach((r, b) => {
      assert.equal(r.stopReason, 'context_full', `T=${temperature}, prompt ${b}`);
      assert.equal(prompts[b]!.length + r.tokens.length, CONTEXT, `T=${temperature}, prompt ${b}: prompt and tokens fill the context exactly`);
      assert.equal(r.logprobs.length, r.tokens.length);
    });
    const scored = await e.forward(base, prompts.map((p, b) => ({ tokens: [...p, ...out[b]!.tokens], scoreFrom: p.length })), { temperature });
    const diff = maxAbsDiff(scored.logprobs!, out.map((r) => r.logprobs));
    assert.ok(diff < 1e-4, `T=${temperature}: max diff ${diff}`);
    // Greedy: each request alone gives the same tokens, so the others stopping earlier or later does not
    // disturb it (sampled requests draw from per-index streams, so only greedy compares across batches).
    if (temperature === 0) for (const [b, p] of prompts.entries()) {
      const [alone] = await e.sample(base, [p], { ...params, temperature });
      assert.deepEqual(alone!.tokens, out[b]!.tokens, `T=${temperature}, prompt ${b} alone`);
    }
  }
});

test('maxNewTokens that ends exactly at the context reports max_tokens; a prompt as long as the context is refused', async () => {
  const e = randomEngine(2);
  const [prompt] = testSequences(cfg.vocabSize, [10], 6);
  const [exact] = await e.sample(base, [prompt!], { ...params, maxNewTokens: CONTEXT - 10 });
  assert.equal(exact!.tokens.length, CONTEXT - 10);
  assert.equal(exact!.stopReason, 'max_tokens');
  const [short] = await e.sample(base, [prompt!], { ...params, maxNewTokens: CONTEXT - 11 });
  assert.equal(short!.stopReason, 'max_tokens');
  assert.deepEqual(short!.tokens, exact!.tokens.slice(0, CONTEXT - 11));
  const [full] = testSequences(cfg.vocabSize, [CONTEXT], 7);
  await assert.rejects(e.sample(base, [full!], params), new RegExp(`prompt 0 has ${CONTEXT} tokens, the model's context is ${CONTEXT}`));
});
