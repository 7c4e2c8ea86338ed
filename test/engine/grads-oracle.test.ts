// Gradients of the embedded engine against torch autograd for the same per-token loss weights
// (loss = Σ w·logprob, or Σ w·value for critics): LoRA A/B, full base training (tied and untied,
// biases, q/k norms), the LoRA critic (adapter + linear head) and the frozen-base MLP critic.
// Issue 2: within 1e-4 relative (‖Δ‖∞ / ‖ref‖∞ per tensor).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';
import { namedParams, hfLinearName } from '../../src/engine/embedded/weights.ts';
import type { LinearModule } from '../../src/engine/types.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, relErr, skipWithoutVenv, tempDir, testSequences, type OracleJob } from './oracle-helpers.ts';

const sequences = testSequences(97, [19, 6, 33], 11);
const weights = sequences.map((s, b) => Array.from({ length: s.length - 1 }, (_, k) => Math.sin(1 + 3 * b + 0.7 * k)));
const work = tempDir('grads');
const adapterDir = join(work, 'adapter');
const loraCriticDir = join(work, 'lora-critic');
const mlpCriticDir = join(work, 'mlp-critic');
let outs: Map<string, string>;

function load(dir: string): EmbeddedEngine {
  const { config, weights: w } = loadBaseDir(dir);
  return new EmbeddedEngine(config, w);
}

function randomize(data: Float32Array, seed: number, scale: number): void {
  for (let i = 0; i < data.length; i++) data[i] = scale * Math.sin(seed + 12.9898 * i);
}

before(async () => {
  if (skipWithoutVenv) return;
  const ck = checkpointJobs(['qwen2', 'qwen3', 'llama']);
  if (ck.length) oracleBatch(ck);
  // Critics are made here (non-zero LoRA B, random heads) and saved for the oracle to load.
  const e2 = load(checkpointDir('qwen2'));
  await e2.createCritic('c', { kind: 'lora-critic', lora: { rank: 4, alpha: 16, targetModules: ['q_proj', 'v_proj', 'down_proj'] } }, 5);
  e2.getCritic('c').lora!.layers.forEach((l, i) => Object.values(l).forEach((m, j) => randomize(m.B.data, 100 * i + j, 0.3)));
  await e2.saveCritic('c', loraCriticDir);
  const e3 = load(checkpointDir('llama'));
  await e3.createCritic('m', { kind: 'mlp', hidden: [16, 8] }, 6);
  await e3.saveCritic('m', mlpCriticDir);
  const input = { tokens: sequences, weights };
  const jobs: OracleJob[] = [
    { cmd: 'make-lora', model: checkpointDir('qwen3'), out: adapterDir, rank: 4, alpha: 8, seed: 4 },
    { cmd: 'grads', model: checkpointDir('qwen3'), adapter: adapterDir, input, outName: 'lora.safetensors' },
    { cmd: 'grads', model: checkpointDir('qwen2'), full: true, input, outName: 'full-qwen2.safetensors' },
    { cmd: 'grads', model: checkpointDir('qwen3'), full: true, input, outName: 'full-qwen3.safetensors' },
    { cmd: 'critic', model: checkpointDir('qwen2'), adapter: loraCriticDir, head: join(loraCriticDir, 'value_head.safetensors'), input, outName: 'critic.safetensors' },
    { cmd: 'mlp-critic', model: checkpointDir('llama'), head: join(mlpCriticDir, 'value_head.safetensors'), input, outName: 'mlp.safetensors' },
  ];
  const paths = oracleBatch(jobs);
  outs = new Map(jobs.map((j, i) => [String(j.outName ?? j.cmd), paths[i]!]));
});

const requests = sequences.map((tokens) => ({ tokens, scoreFrom: 1 }));
const dl = weights.map((w) => Float32Array.from(w));

function checkLoraGrads(layers: ReturnType<EmbeddedEngine['getAdapter']>['layers'], ref: Map<string, { data: Float32Array }>, prefix: string): number {
  let worst = 0, n = 0;
  layers.forEach((layer, i) => {
    for (const [m, mod] of Object.entries(layer) as [LinearModule, { A: { grad: Float32Array | null }; B: { grad: Float32Array | null } }][]) {
      for (const which of ['A', 'B'] as const) {
        const r = ref.get(`${prefix}${hfLinearName(i, m)}.lora_${which}.default.weight`);
        assert.ok(r, `oracle has no gradient for layer ${i} ${m} ${which}`);
        worst = Math.max(worst, relErr(mod[which].grad!, r.data));
        n++;
      }
    }
  });
  assert.ok(n > 0);
  return worst;
}

test('LoRA A/B gradients match PEFT + torch autograd within 1e-4 relative (qwen3)', { skip: skipWithoutVenv }, async () => {
  const e = load(checkpointDir('qwen3'));
  await e.loadAdapter('a', adapterDir);
  const f = await e.forward({ kind: 'adapter', name: 'a' }, requests, { retainGraph: true });
  await e.backward(f.handle!, { dLogprobs: dl });
  const ref = readSafetensors(outs.get('lora.safetensors')!);
  const worst = checkLoraGrads(e.getAdapter('a').layers, ref, 'base_model.model.');
  assert.ok(worst < 1e-4, `worst relative error ${worst}`);
});

for (const arch of ['qwen2', 'qwen3'] as const) {
  test(`full-parameter gradients match torch autograd within 1e-4 relative (${arch}${arch === 'qwen2' ? ', tied, biases' : ', q/k norms'})`, { skip: skipWithoutVenv }, async () => {
    const e = load(checkpointDir(arch));
    await e.setBaseTrainable(true);
    const f = await e.forward({ kind: 'base' }, requests, { retainGraph: true });
    await e.backward(f.handle!, { dLogprobs: dl });
    const ref = readSafetensors(outs.get(`full-${arch}.safetensors`)!);
    let worst = 0, count = 0;
    for (const [name, p] of namedParams(e.model.weights)) {
      const r = ref.get(name);
      assert.ok(r, `oracle has no gradient for ${name}`);
      const err = relErr(p.grad!, r.data);
      assert.ok(err < 1e-4, `${name}: relative error ${err}`);
      worst = Math.max(worst, err);
      count++;
    }
    assert.equal(count, ref.size);
  });
}

test('LoRA critic (adapter + linear head): values and gradients match torch within 1e-4', { skip: skipWithoutVenv }, async () => {
  const e = load(checkpointDir('qwen2'));
  await e.loadCritic('c', loraCriticDir);
  const f = await e.forward({ kind: 'critic', name: 'c' }, requests, { retainGraph: true });
  const ref = readSafetensors(outs.get('critic.safetensors')!);
  const refValues = sequences.map((_, b) => ref.get(`values.${b}`)!.data);
  assert.ok(maxAbsDiff(f.values!, refValues) < 1e-4, `values differ by ${maxAbsDiff(f.values!, refValues)}`);
  await e.backward(f.handle!, { dValues: dl });
  const critic = e.getCritic('c');
  assert.ok(relErr(critic.head.layers[0]!.W.grad!, ref.get('head.layers.0.weight')!.data) < 1e-4);
  assert.ok(relErr(critic.head.layers[0]!.b.grad!, ref.get('head.layers.0.bias')!.data) < 1e-4);
  const worst = checkLoraGrads(critic.lora!.layers, ref, 'base_model.model.');
  assert.ok(worst < 1e-4, `worst LoRA relative error ${worst}`);
});

test('MLP critic on the frozen base: values and head gradients match torch within 1e-4', { skip: skipWithoutVenv }, async () => {
  const e = load(checkpointDir('llama'));
  await e.loadCritic('m', mlpCriticDir);
  const f = await e.forward({ kind: 'critic', name: 'm' }, requests, { retainGraph: true });
  const ref = readSafetensors(outs.get('mlp.safetensors')!);
  const refValues = sequences.map((_, b) => ref.get(`values.${b}`)!.data);
  assert.ok(maxAbsDiff(f.values!, refValues) < 1e-4);
  await e.backward(f.handle!, { dValues: dl });
  const head = e.getCritic('m').head;
  assert.equal(head.layers.length, 3);
  head.layers.forEach((l, i) => {
    assert.ok(relErr(l.W.grad!, ref.get(`head.layers.${i}.weight`)!.data) < 1e-4, `layer ${i} W`);
    assert.ok(relErr(l.b.grad!, ref.get(`head.layers.${i}.bias`)!.data) < 1e-4, `layer ${i} b`);
  });
  // The base stays frozen.
  for (const [, p] of namedParams(e.model.weights)) assert.equal(p.grad, null);
});
