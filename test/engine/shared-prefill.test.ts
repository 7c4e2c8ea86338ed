// The embedded engine prefills a prompt that several requests of one sample() call share once and
// copies its keys and values to the others (src/engine/embedded/generate.ts): the samples are those
// of a prefill per request (log-probs within float rounding, since the prefill's packed rows differ),
// and the prefill computes each distinct prompt's rows once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig, SampleParams, SampleResult } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { promptLeaders } from '../../src/engine/embedded/generate.ts';
import { spreadWeights } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 60, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 96, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [1],
};
const a = [3, 4, 5, 6, 7, 8, 9], b = [11, 12], c = [20, 21, 22, 23];
// Duplicates out of order, a prompt that is a prefix of another (not the same prompt), and a singleton.
const prompts = [a, b, a, a, c, b, a.slice(0, 5), a];

/** An engine whose model counts the rows each forward pass computes. */
function countingEngine(sharePrefill: boolean): { engine: EmbeddedEngine; rows: number[] } {
  const engine = new EmbeddedEngine(cfg, spreadWeights(cfg, 3), { sharePrefill });
  const rows: number[] = [];
  const forward = engine.model.forward.bind(engine.model);
  engine.model.forward = (tokens, ...rest) => { rows.push(tokens.length); return forward(tokens, ...rest); };
  return { engine, rows };
}

function assertSameSamples(shared: SampleResult[], separate: SampleResult[], what: string): void {
  assert.deepEqual(shared.map((r) => [r.tokens, r.stopReason]), separate.map((r) => [r.tokens, r.stopReason]), `${what}: tokens`);
  shared.forEach((r, i) => r.logprobs.forEach((lp, t) => assert.ok(Math.abs(lp - separate[i]!.logprobs[t]!) < 1e-5, `${what}: request ${i} token ${t}: ${lp} vs ${separate[i]!.logprobs[t]}`)));
}

test('promptLeaders maps each prompt to the first one with the same tokens', () => {
  assert.deepEqual(promptLeaders(prompts), [0, 1, 0, 0, 4, 1, 6, 0]);
  assert.deepEqual(promptLeaders([[1, 23], [12, 3], [1, 23]]), [0, 1, 0], 'tokens, not their digits, are compared');
  assert.deepEqual(promptLeaders([]), []);
});

test('shared prompts are prefilled once, and the samples equal those of a prefill per request (base and adapter, sampled and greedy)', async () => {
  const shared = countingEngine(true), separate = countingEngine(false);
  for (const { engine } of [shared, separate]) {
    await engine.createAdapter('p', { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] }, 5);
    // B starts at zero; a non-zero B makes the adapter change the keys and values that are shared.
    engine.getAdapter('p').layers.forEach((l) => Object.values(l).forEach((m) => m.B.data.forEach((_, i, x) => { x[i] = 0.05 * Math.sin(i); })));
  }
  const params: SampleParams = { temperature: 1, topP: 0.9, topK: 0, maxNewTokens: 10, stopTokenIds: [1], stopStrings: [], seed: 7 };
  for (const target of [{ kind: 'base' as const }, { kind: 'adapter' as const, name: 'p' }]) {
    for (const temperature of [1, 0]) {
      shared.rows.length = 0;
      separate.rows.length = 0;
      const s = await shared.engine.sample(target, prompts, { ...params, temperature });
      const t = await separate.engine.sample(target, prompts, { ...params, temperature });
      assertSameSamples(s, t, `${target.kind} at temperature ${temperature}`);
      assert.equal(separate.rows[0], prompts.flat().length, 'without sharing every prompt is prefilled');
      assert.equal(shared.rows[0], a.length + b.length + c.length + 5, 'with sharing each distinct prompt is prefilled once');
      assert.deepEqual(shared.rows.slice(1), separate.rows.slice(1), 'the decoding steps are the same');
    }
  }
  // Sharing does not tie the duplicates together: each request draws from its own generator.
  const s = await shared.engine.sample({ kind: 'base' }, [a, a, a, a], { ...params, maxNewTokens: 16 });
  assert.ok(new Set(s.map((r) => r.tokens.join(','))).size > 1, 'the samples of one prompt differ');
});
