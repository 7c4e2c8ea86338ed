// `sampler.engine: vllm` in a configuration (src/config/schema.ts → src/run/setup.ts → openEngine):
// the refusals in one line naming the key (no vLLM needed, these run in CI), and one training step of
// examples/coordination-embedded.yaml through buildRun, where marft starts its own vLLM server on
// RUN/base, and `marft train --set model.engine=torch --set sampler.engine=vllm` (the torch worker and
// the server both on RUN/base) stopping in one line when the consistency check trips (long; they skip
// without .venv-vllm, the last also without the torch engine's venv).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { ConfigError } from '../../src/config/schema-dsl.ts';
import { buildRun } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';
import { VllmSampledEngine } from '../../src/engine/vllm/engine.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { skipWithoutTorch } from './torch-helpers.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';

const configFile = join(repoRoot, 'examples/coordination-embedded.yaml');
const python = vllmPython;
const skip = skipWithoutVllm;

test('sampler.engine vllm: a missing interpreter and the tabular engine are refused in one line naming the key', async () => {
  const dir = tempDir('vllm-config');
  try {
    const missing = await loadConfig(configFile, ['sampler.engine=vllm', 'sampler.python=/nonexistent/python']);
    await assert.rejects(buildRun(missing, join(dir, 'run')), (e: Error) => e instanceof ConfigError
      && /^sampler\.engine: vllm: no Python for vLLM at \/nonexistent\/python: run 'bash scripts\/setup\.sh --vllm'/.test(e.message) && !e.message.includes('\n'));
    const tabular = await loadConfig(configFile, ['sampler.engine=vllm', 'model.engine=tabular']);
    await assert.rejects(buildRun(tabular), (e: Error) => e instanceof ConfigError && e.message.startsWith('sampler.engine: vllm needs model.engine embedded or torch'));
    assert.equal((await loadConfig(configFile)).sampler.engine, 'trainer');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('marft train checks the algorithm\'s plan before it starts any engine: a refused sampler mismatch is its one line, not the missing vLLM interpreter\'s', async () => {
  const dir = tempDir('vllm-config');
  try {
    const r = await runCli({ args: ['train', configFile, '--run-dir', join(dir, 'run'), '--no-progress', ...['sampler.engine=vllm', 'sampler.python=/nonexistent/python', 'actor.decoupled=false'].flatMap((s) => ['--set', s])] });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^marft train: actor\.decoupled: false with sampler\.engine: vllm leaves the sampler\/trainer mismatch of marft-action uncorrected/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sampler.engine vllm: one training step through buildRun samples on a vLLM server that marft starts', { skip, timeout: 600_000 }, async () => {
  const dir = tempDir('vllm-config');
  const config = await loadConfig(configFile, ['sampler.engine=vllm', 'sampler.tolerance=1e-4', 'sampler.maxLoras=2', 'train.steps=1', 'rollout.batchSize=8', 'actor.epochs=1', 'train.evalEvery=0']);
  const saved = { ...process.env };
  Object.assign(process.env, { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' });
  const { bundle, engine } = await buildRun(config, join(dir, 'run'));
  process.env = saved;
  try {
    assert.ok(engine instanceof VllmSampledEngine);
    const result = await train({ config, engine, task: bundle.task, runDir: join(dir, 'run'), progress: false });
    const [policy] = [...new Set(Object.values(result.plan.policies))];
    assert.equal(engine.versions.version(policy!), 1);
    assert.deepEqual(engine.versions.unloaded, [`${policy}-v0`]);
    assert.ok(Math.abs(Number(result.metrics[0]!.importance_weight_mean) - 1) < 1e-3);
  } finally {
    await engine.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('marft train with model.engine torch and sampler.engine vllm: a consistency check that trips stops the run in one line (exit 2) and marft exits', { skip: skip || skipWithoutTorch, timeout: 300_000 }, async () => {
  const dir = tempDir('vllm-config');
  try {
    // Tolerance 0: the torch worker and vLLM, both float32, differ by about 1e-6 (never exactly 0), so the first check (v0, at the adapter's creation) trips.
    const sets = ['model.engine=torch', 'model.threads=1', 'sampler.engine=vllm', 'sampler.tolerance=0', 'sampler.maxLoras=2', 'train.steps=1', 'rollout.batchSize=8', 'train.evalEvery=0'].flatMap((s) => ['--set', s]);
    const env = { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const running = runCli({ args: ['train', configFile, '--run-dir', join(dir, 'run'), ...sets, '--no-progress'] }); // spawned with this environment
    process.env = saved;
    // Returns only once marft has exited: its engine (and the server it started) is disposed on the failure too.
    const r = await running;
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^marft train: vLLM serves adapter 'policy' version 0 \(policy-v0\) differently from the training engine: max \|Δ log-prob\| \S+ > tolerance 0 \(sampler\.tolerance\)/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
