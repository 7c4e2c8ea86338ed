// Sampling through a LoRA adapter whose B is non-zero (a trained adapter, unlike a new one, changes the
// model): the KV-cached, batched decoder must run the adapter in the prefill and in every decoding step.
// In-process: the sampled log-probs equal the adapter's scoring forward, and greedy tokens move away from
// the base's. Against PEFT (oracle venv): greedy tokens equal PEFT's generate, sampled log-probs equal
// PEFT's log-probs of the same sequences.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import type { ModelConfig, SampleParams } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, readJson, skipWithoutVenv, spreadWeights, tempDir, testSequences } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 61, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 96, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [],
};
const params: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 24, stopTokenIds: [], stopStrings: [], seed: 7 };
const greedy: SampleParams = { ...params, temperature: 0 };
const adapter = { kind: 'adapter', name: 'trained' } as const;
const base = { kind: 'base' } as const;

const randomEngine = (seed: number): EmbeddedEngine => new EmbeddedEngine(cfg, spreadWeights(cfg, seed));

/** Fills every B of the adapter (zero at creation) with `scale`·sin(...): what training would have moved. */
function setB(e: EmbeddedEngine, name: string, scale: number): void {
  e.getAdapter(name).layers.forEach((layer, i) => Object.values(layer).forEach((m, j) => {
    for (let k = 0; k < m.B.data.length; k++) m.B.data[k] = scale * Math.sin(1 + i + 5 * j + 0.37 * k);
  }));
}

const scoreRequests = (prompts: number[][], outs: { tokens: number[] }[]): { tokens: number[]; scoreFrom: number }[] =>
  prompts.map((p, b) => ({ tokens: [...p, ...outs[b]!.tokens], scoreFrom: p.length }));

test('sampling through an adapter with non-zero B: each log-prob equals the adapter\'s scoring forward (KV cache, ragged batch)', async () => {
  const e = randomEngine(3);
  await e.createAdapter('trained', { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] }, 5);
  setB(e, 'trained', 0.5);
  const prompts = testSequences(cfg.vocabSize, [1, 6, 13], 11);
  for (const temperature of [1, 0.7]) {
    const out = await e.sample(adapter, prompts, { ...params, temperature });
    out.forEach((r) => assert.equal(r.tokens.length, params.maxNewTokens));
    const sampled = out.map((r) => r.logprobs);
    const viaAdapter = await e.forward(adapter, scoreRequests(prompts, out), { temperature });
    const viaBase = await e.forward(base, scoreRequests(prompts, out), { temperature });
    const diff = maxAbsDiff(viaAdapter.logprobs!, sampled);
    assert.ok(diff < 1e-4, `T=${temperature}: sampled vs the adapter's forward, max diff ${diff}`);
    // The check has power only if the adapter changes these log-probs well beyond the tolerance.
    assert.ok(maxAbsDiff(viaBase.logprobs!, sampled) > 0.1, `T=${temperature}: the adapter must change the sampled log-probs`);
  }
});

test('greedy decoding through an adapter with a large B gives other tokens than the base, with the adapter\'s log-probs', async () => {
  const e = randomEngine(4);
  await e.createAdapter('trained', { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] }, 6);
  setB(e, 'trained', 1);
  const prompts = testSequences(cfg.vocabSize, [2, 9, 4], 12);
  const viaAdapter = await e.sample(adapter, prompts, greedy);
  const viaBase = await e.sample(base, prompts, greedy);
  // Not just the first token (which the prefill decides): the adapter's continuations differ after it too.
  viaAdapter.forEach((r, b) => {
    assert.notDeepEqual(r.tokens.slice(1), viaBase[b]!.tokens.slice(1), `prompt ${b}: the adapter must change the greedy continuation`);
  });
  const scored = await e.forward(adapter, scoreRequests(prompts, viaAdapter));
  const diff = maxAbsDiff(scored.logprobs!, viaAdapter.map((r) => r.logprobs));
  assert.ok(diff < 1e-4, `greedy log-probs vs the adapter's forward: max diff ${diff}`);
  // Greedy: each token is the argmax of the adapter's distribution, so no other token of the forward is likelier.
  const again = await e.sample(adapter, prompts.map((p, b) => [...p, ...viaAdapter[b]!.tokens.slice(0, 5)]), { ...greedy, maxNewTokens: 19 });
  again.forEach((r, b) => assert.deepEqual(r.tokens, viaAdapter[b]!.tokens.slice(5), `prompt ${b}: greedy from a longer prefix continues the same way`));
});

// ---- against PEFT -----------------------------------------------------------------------------

const work = tempDir('adapter-sampling');
const peftAdapter = join(work, 'peft-lora');
const oraclePrompts = testSequences(97, [2, 7, 11], 31);
let peftGreedy: number[][] = [];
let sampledOurs: { tokens: number[]; logprobs: number[] }[] = [];
let peftLogprobsOfSampled: number[][] = [];

function load(dir: string): EmbeddedEngine {
  const { config, weights } = loadBaseDir(dir);
  return new EmbeddedEngine(config, weights);
}

before(async () => {
  if (skipWithoutVenv) return;
  // PEFT writes an adapter with non-zero A and B over the tiny Llama checkpoint.
  oracleBatch([...checkpointJobs(['llama']), { cmd: 'make-lora', model: checkpointDir('llama'), out: peftAdapter, rank: 4, alpha: 8, seed: 3 }]);
  const e = load(checkpointDir('llama'));
  await e.loadAdapter('trained', peftAdapter);
  sampledOurs = await e.sample(adapter, oraclePrompts, params);
  const jobs = [
    { cmd: 'generate', model: checkpointDir('llama'), adapter: peftAdapter, input: oraclePrompts, 'max-new': greedy.maxNewTokens, outName: 'greedy' },
    { cmd: 'logprobs', model: checkpointDir('llama'), adapter: peftAdapter, input: scoreRequests(oraclePrompts, sampledOurs).map((r) => r.tokens), outName: 'sampled' },
  ];
  const [greedyOut, sampledOut] = oracleBatch(jobs);
  peftGreedy = readJson<{ tokens: number[][] }>(greedyOut!).tokens;
  // PEFT scores every position; keep the generated tokens' (from the last prompt token on).
  peftLogprobsOfSampled = readJson<{ logprobs: number[][] }>(sampledOut!).logprobs.map((lp, b) => lp.slice(oraclePrompts[b]!.length - 1));
});

test('greedy decoding through a PEFT adapter (non-zero A and B) equals PEFT\'s generate, batched with ragged prompts', { skip: skipWithoutVenv }, async () => {
  const e = load(checkpointDir('llama'));
  await e.loadAdapter('trained', peftAdapter);
  const ours = await e.sample(adapter, oraclePrompts, greedy);
  ours.forEach((r, b) => assert.deepEqual(r.tokens, peftGreedy[b], `prompt ${b}`));
  const baseGreedy = await e.sample(base, oraclePrompts, greedy);
  assert.ok(baseGreedy.some((r, b) => r.tokens.slice(1).join() !== peftGreedy[b]!.slice(1).join()), 'the adapter must change some greedy continuation');
});

test('tokens sampled through a PEFT adapter carry PEFT\'s log-probs of the same sequences (within 1e-4)', { skip: skipWithoutVenv }, () => {
  const diff = maxAbsDiff(sampledOurs.map((r) => r.logprobs), peftLogprobsOfSampled);
  assert.ok(diff < 1e-4, `max diff ${diff}`);
});
