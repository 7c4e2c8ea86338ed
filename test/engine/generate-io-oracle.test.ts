// Greedy decoding against transformers' generate, adapters saved here loaded by PEFT, and AdamW
// against torch.optim.AdamW (with clip_grad_norm_ and weight decay).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import { adamwStep, newAdamState } from '../../src/engine/embedded/adamw.ts';
import { param } from '../../src/engine/embedded/param.ts';
import type { ModelConfig, OptimParams } from '../../src/engine/types.ts';
import { createEngine } from '../../src/engine/index.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, readJson, skipWithoutVenv, tempDir, testSequences, type OracleJob, type TinyArch } from './oracle-helpers.ts';

const archs: TinyArch[] = ['qwen2', 'qwen3', 'llama'];
const prompts = testSequences(97, [3, 9, 1, 14], 21);
const sequences = testSequences(97, [12, 30, 4], 5);
const work = tempDir('gen-io');
const ourAdapter = join(work, 'ours');
const ourBase = join(work, 'base');
const savedCfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 97, hiddenSize: 48, intermediateSize: 80, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 16, rmsNormEps: 1e-5, ropeTheta: 50000, maxPositionEmbeddings: 128, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [2],
};

const hyper: OptimParams = { lr: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1.0 };
const adamParams = [Array.from({ length: 37 }, (_, i) => Math.sin(i)), Array.from({ length: 5 }, (_, i) => Math.cos(3 * i))];
const adamGrads = Array.from({ length: 6 }, (_, s) => adamParams.map((p, j) => p.map((_, i) => (s === 2 ? 3 : 0.2) * Math.sin(7 * i + 13 * s + j))));
const results = new Map<string, string>();
let ourBaseLogprobs: Float32Array[] = [];

function load(dir: string): EmbeddedEngine {
  const { config, weights } = loadBaseDir(dir);
  return new EmbeddedEngine(config, weights);
}

before(async () => {
  if (skipWithoutVenv) return;
  const ck = checkpointJobs(archs);
  if (ck.length) oracleBatch(ck);
  const e = load(checkpointDir('llama'));
  await e.createAdapter('mine', { rank: 3, alpha: 6, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, 9);
  e.getAdapter('mine').layers.forEach((l, i) => Object.values(l).forEach((m, j) => {
    for (let k = 0; k < m.B.data.length; k++) m.B.data[k] = 0.3 * Math.sin(i + 5 * j + 0.37 * k);
  }));
  await e.saveAdapter('mine', ourAdapter);
  const fresh = createEngine(savedCfg, { seed: 4 });
  await fresh.setBaseTrainable(true);
  for (let step = 0; step < 3; step++) { // a few steps so no weight keeps its initial value
    const f = await fresh.forward({ kind: 'base' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })), { retainGraph: true });
    await fresh.backward(f.handle!, { dLogprobs: f.logprobs!.map((lp) => lp.map(() => -1)) });
    await fresh.optimStep({ kind: 'base' }, { lr: 0.05, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
  }
  await fresh.saveBase(ourBase);
  ourBaseLogprobs = (await fresh.forward({ kind: 'base' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })))).logprobs!;
  const jobs: OracleJob[] = [
    ...archs.map((arch) => ({ cmd: 'generate', model: checkpointDir(arch), input: prompts, 'max-new': 32, outName: `gen-${arch}` })),
    { cmd: 'logprobs', model: checkpointDir('llama'), adapter: ourAdapter, input: sequences, outName: 'peft-of-ours' },
    { cmd: 'logprobs', model: ourBase, input: sequences, outName: 'transformers-of-ours' },
    { cmd: 'adamw', input: { params: adamParams, grads: adamGrads, hyper }, outName: 'adamw' },
  ];
  const outs = oracleBatch(jobs);
  jobs.forEach((j, i) => results.set(String(j.outName), outs[i]!));
});

for (const arch of archs) {
  test(`${arch}: greedy decoding of 32 tokens equals transformers' generate (batched, ragged prompts)`, { skip: skipWithoutVenv }, async () => {
    const ref = readJson<{ tokens: number[][] }>(results.get(`gen-${arch}`)!).tokens;
    const e = load(checkpointDir(arch));
    const out = await e.sample({ kind: 'base' }, prompts, { temperature: 0, topP: 1, topK: 0, maxNewTokens: 32, stopTokenIds: [], stopStrings: [], seed: 0 });
    out.forEach((r, b) => {
      assert.deepEqual(r.tokens, ref[b], `prompt ${b}`);
      assert.equal(r.stopReason, 'max_tokens');
    });
    // The sampled log-probs (greedy: of the unscaled softmax) equal a scoring forward of the same tokens.
    const scored = await e.forward({ kind: 'base' }, prompts.map((p, b) => ({ tokens: [...p, ...out[b]!.tokens], scoreFrom: p.length })));
    assert.ok(maxAbsDiff(scored.logprobs!, out.map((r) => r.logprobs)) < 1e-4);
  });
}

test('an adapter saved here loads in PEFT with the same log-probs', { skip: skipWithoutVenv }, async () => {
  const ref = readJson<{ logprobs: number[][] }>(results.get('peft-of-ours')!).logprobs;
  const e = load(checkpointDir('llama'));
  await e.loadAdapter('back', ourAdapter);
  const out = await e.forward({ kind: 'adapter', name: 'back' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })));
  const base = await e.forward({ kind: 'base' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })));
  assert.ok(maxAbsDiff(out.logprobs!, ref) < 1e-4, `max diff ${maxAbsDiff(out.logprobs!, ref)}`);
  assert.ok(maxAbsDiff(base.logprobs!, ref) > 1e-2, 'the adapter must change the model');
});

test('a base model trained and saved here (saveBase) loads in transformers with the same log-probs', { skip: skipWithoutVenv }, () => {
  const ref = readJson<{ logprobs: number[][] }>(results.get('transformers-of-ours')!).logprobs;
  const diff = maxAbsDiff(ourBaseLogprobs, ref);
  assert.ok(diff < 1e-4, `max diff ${diff}`);
});

test('AdamW with clipping and weight decay matches torch.optim.AdamW step for step', { skip: skipWithoutVenv }, () => {
  const ref = readJson<{ params: number[][]; norms: number[] }>(results.get('adamw')!);
  const ps = adamParams.map((p) => param([p.length], Float32Array.from(p)));
  const state = newAdamState(ps);
  const norms: number[] = [];
  for (const step of adamGrads) {
    ps.forEach((p, j) => { p.grad = Float32Array.from(step[j]!); });
    norms.push(adamwStep(ps, state, hyper));
  }
  norms.forEach((n, i) => assert.ok(Math.abs(n - ref.norms[i]!) < 1e-5 * Math.max(1, ref.norms[i]!), `norm ${i}: ${n} vs ${ref.norms[i]}`));
  assert.ok(ref.norms[2]! > hyper.maxGradNorm, 'one step must be clipped');
  const diff = maxAbsDiff(ps.map((p) => p.data), ref.params);
  assert.ok(diff < 1e-6, `params differ by ${diff}`);
});
