// The example configurations train end to end through the real trainer: GSM8K Duo on a model folder
// written by scripts/make-tiny-model.ts, MBPP Duo on the tiny model the task builds itself (saved to
// RUN/base). Real data, real workflow, real verifier and sandbox, real MARFT updates and checkpoints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { buildRun } from '../../src/run/setup.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { train } from '../../src/run/train.ts';
import { evaluatePolicies } from '../../src/train/evaluate.ts';
import { MetricsLog } from '../../src/runs/metrics-log.ts';
import { loadDataset } from '../../src/env/datasets/index.ts';
import type { WorkflowTask } from '../../src/tasks/index.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
/** About 15 s on 2 shared cores (three short runs): skipped in the fast suite. */
const long = process.env.MARFT_LONG_TESTS === '0';

test('examples/gsm8k-duo.yaml: two MARFT steps on a tiny model folder, held-out GSM8K test problems, a resumed run with the same metrics', { skip: long, timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-gsm8k-duo-'));
  try {
    const model = join(dir, 'model');
    const made = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/make-tiny-model.ts'), '--out', model, '--hidden-size', '32', '--seed', '3'], { cwd: repo, encoding: 'utf8' }));
    assert.deepEqual(made, { out: model, vocabSize: 105, hiddenSize: 32, layers: 2, contextLength: 8192, seed: 3 });
    const config = await loadConfig(join(repo, 'examples/gsm8k-duo.yaml'));
    config.model.path = model;
    config.task.options = { ...config.task.options, tokenizer: model };
    const runDir = join(dir, 'run');
    const { bundle, engine } = await buildRun(config, runDir);
    assert.ok(engine instanceof EmbeddedEngine, 'model.engine embedded (the default)');
    assert.equal(engine.config.hiddenSize, 32);
    const result = await train({ config, engine, task: bundle.task, runDir, progress: false });
    assert.equal(result.metrics.length, 2);
    for (const m of result.metrics) {
      assert.ok((m['tokens_generated'] as number) > 0);
      assert.ok(Number.isFinite(m['reward/planner'] as number) && Number.isFinite(m['reward/solver'] as number));
      assert.ok(Number.isFinite(m['value_loss'] as number));
    }
    assert.ok(existsSync(join(result.checkpoint, 'state.json')));
    assert.equal(readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 2);
    const after = await evaluatePolicies(engine, bundle.task, config, result.plan.policies);
    assert.equal(after.problems, 4);
    const testIds = new Set(loadDataset('gsm8k').problems.map((p) => p.id));
    assert.ok((bundle.task as WorkflowTask).problems.heldOut.slice(0, 4).every((p) => testIds.has(p.id)), 'held out from GSM8K test');
    await engine.dispose();

    // Interrupted after step 1 and resumed, each leg in a process of its own as in real use (see
    // train-in-child.ts): the same metrics, timings aside, because the task draws each step's
    // problems from (seed, step) only and the checkpoint holds everything else.
    const resumedDir = join(dir, 'resumed');
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(config));
    const leg = (...args: string[]) =>
      JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'test/tasks/train-in-child.ts'), configFile, resumedDir, ...args], { cwd: repo, encoding: 'utf8' }).trim().split('\n').pop()!);
    assert.deepEqual(leg('1'), { resumedFrom: null, steps: 1 });
    assert.deepEqual(leg(), { resumedFrom: 1, steps: 2 });
    // Every key exactly, timings aside: same seed, commit and thread count give the same bits in any
    // process (docs/engine.md, "Determinism inside one process"). Before OpenBLAS's thread count was
    // settled at the first product, the resumed leg's first sampling call rounded the last bits of
    // importance_weight_mean and policy_loss differently (0.99999994 vs 1.00000000000006).
    const untimed = (ms: typeof result.metrics) => ms.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.endsWith('_s'))));
    const resumedMetrics = await new MetricsLog(join(resumedDir, 'metrics.jsonl')).read();
    assert.deepEqual(untimed(resumedMetrics), untimed(result.metrics));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('examples/mbpp-duo-code.yaml: the task builds and saves its tiny model; one MARFT step on MBPP', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-mbpp-duo-'));
  try {
    const config = await loadConfig(join(repo, 'examples/mbpp-duo-code.yaml'));
    const { bundle, engine } = await buildRun(config, dir);
    assert.ok(existsSync(join(dir, 'base', 'config.json')), 'the built model is saved to RUN/base');
    const result = await train({ config, engine, task: bundle.task, runDir: dir, progress: false, stopAtStep: 1 });
    assert.equal(result.metrics.length, 1);
    assert.ok((result.metrics[0]!['tokens_generated'] as number) > 0);
    await engine.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
