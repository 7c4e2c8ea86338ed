// Continuous batching in the embedded engine (engine option maxSequences, src/engine/embedded/generate.ts):
// at most that many sequences are in flight, a finished sequence's slot is taken by the next waiting
// request in the same pass as the others' next token, and the samples are those of an uncapped call
// (log-probs within float rounding: the passes pack different rows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig, SampleParams } from '../../src/engine/types.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import type { SeqSpan } from '../../src/engine/embedded/decoder-layer.ts';
import { spreadWeights } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'llama', vocabSize: 24, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 64, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: false, bosTokenId: null, eosTokenIds: [1],
};
// Nine requests, two of them the same prompt, with a stop token among 24 so that lengths differ.
const prompts = [[3, 4, 5], [7], [9, 10, 11, 12], [3, 4, 5], [13, 14], [15], [16, 17, 18, 19, 20], [21, 2], [6, 8]];
const params: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 14, stopTokenIds: [1, 2], stopStrings: [], seed: 11 };

function engine(maxSequences?: number): { e: EmbeddedEngine; passes: SeqSpan[][] } {
  const e = new EmbeddedEngine(cfg, spreadWeights(cfg, 4), maxSequences === undefined ? {} : { maxSequences });
  const passes: SeqSpan[][] = [];
  const forward = e.model.forward.bind(e.model);
  e.model.forward = (tokens, seqs, ...rest) => { passes.push(seqs.map((s) => ({ ...s }))); return forward(tokens, seqs, ...rest); };
  return { e, passes };
}

test('with maxSequences 3: never more than 3 in flight, waiting requests prefilled beside running ones, the same samples as uncapped', async () => {
  const all = engine(), capped = engine(3);
  for (const temperature of [1, 0]) {
    all.passes.length = capped.passes.length = 0;
    const want = await all.e.sample({ kind: 'base' }, prompts, { ...params, temperature });
    const got = await capped.e.sample({ kind: 'base' }, prompts, { ...params, temperature });
    assert.deepEqual(got.map((r) => [r.tokens, r.stopReason]), want.map((r) => [r.tokens, r.stopReason]), `temperature ${temperature}`);
    got.forEach((r, i) => r.logprobs.forEach((lp, t) => assert.ok(Math.abs(lp - want[i]!.logprobs[t]!) < 1e-5, `request ${i} token ${t}`)));
    assert.ok(new Set(want.map((r) => r.tokens.length)).size > 1, 'the lengths differ, so slots free at different steps');
    assert.ok(capped.passes.every((seqs) => seqs.length <= 3 && seqs.every((s) => s.slot < 3)), 'at most 3 sequences, in slots 0-2');
    assert.ok(capped.passes.some((seqs) => seqs.some((s) => s.len === 1) && seqs.some((s) => s.past === 0)), 'a prompt prefilled in the same pass as running sequences');
    const prefilled = capped.passes.flat().filter((s) => s.past === 0).length;
    assert.ok(prefilled >= 8 && prefilled <= 9, `every request prefilled once (the duplicate only if admitted with its twin): ${prefilled}`);
    assert.equal(all.passes[0]!.length, 8, 'uncapped: one prefill pass of the 8 distinct prompts');
  }
});

test('maxSequences larger than the batch, or 0, is the uncapped call; a bad value is refused', async () => {
  const want = await engine().e.sample({ kind: 'base' }, prompts, params);
  for (const cap of [0, 9, 50]) {
    const { e, passes } = engine(cap);
    assert.deepEqual(await e.sample({ kind: 'base' }, prompts, params), want, `maxSequences ${cap}`);
    assert.equal(passes[0]!.length, 8);
  }
  await assert.rejects(engine(1.5).e.sample({ kind: 'base' }, prompts, params), /maxSequences must be a non-negative integer, got 1.5/);
});
