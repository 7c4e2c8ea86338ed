// A training run reports through log.to and scores its held-out problems before its first step and
// after its last (issue 21, item 2): RUN/evaluations.json, TrainResult.evalBefore/evalAfter, the
// CSV copy of metrics.jsonl and TensorBoard event files, across an interruption and a resume; and
// through the CLI, eval_before/eval_after in the final line and plain progress lines off a terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRun } from '../../src/run/setup.ts';
import { evaluatePolicies } from '../../src/train/evaluate.ts';
import { runIn, tabularConfig, untimed } from './reliability-fixtures.ts';
import { runCli } from '../cli/spawn-cli.ts';

const csvRows = (file: string): string[] => readFileSync(file, 'utf8').trimEnd().split('\n').slice(1);
const jsonlLines = (file: string): number => readFileSync(file, 'utf8').trimEnd().split('\n').length;
const evaluations = (run: string) => JSON.parse(readFileSync(join(run, 'evaluations.json'), 'utf8'));

test('scores before and after, CSV and TensorBoard output, the same through a stop and a resume', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'marft-train-trackers-'));
  try {
    const config = tabularConfig({ log: { to: ['csv', 'tensorboard'] }, train: { steps: 6, checkpointEvery: 2, evalEvery: 3 }, eval: { seeds: 2 } });
    const whole = join(root, 'whole');
    const result = await runIn(whole, config);
    // Before: the untrained policies, as evaluatePolicies scores fresh trainables of the same seed.
    const fresh = await buildRun(config, join(root, 'fresh'));
    const { createTrainables } = await import('../../src/train/loop.ts');
    const { planFor } = await import('../../src/algorithms/check.ts');
    const plan = planFor(config, fresh.bundle.task);
    await createTrainables(fresh.engine, config, plan);
    const untrained = await evaluatePolicies(fresh.engine, fresh.bundle.task, config, plan.policies);
    await fresh.engine.dispose();
    const { score, perSeed, problems, passAtK } = untrained;
    assert.deepEqual(result.evalBefore, { step: 0, score, perSeed, problems, passAtK });
    // After: the last step's train.evalEvery score is the score after training.
    assert.equal(result.evalAfter!.step, 6);
    assert.equal(result.evalAfter!.score, result.metrics[5]!.eval_score);
    assert.deepEqual(evaluations(whole), { before: result.evalBefore, after: result.evalAfter });
    assert.equal(csvRows(join(whole, 'metrics.csv')).length, 6);
    assert.equal(readdirSync(join(whole, 'tensorboard')).length, 1);

    // Stopped after step 3 (its checkpoint), resumed: the same metrics, scores and CSV rows.
    const split = join(root, 'split');
    const first = await runIn(split, config, { stopAtStep: 3 });
    assert.equal(first.evalAfter, null, 'no score after a run that stopped early');
    assert.deepEqual(first.evalBefore, result.evalBefore);
    assert.equal(evaluations(split).after, null);
    const kept = csvRows(join(split, 'metrics.csv'));
    assert.equal(kept.length, 3);
    // A row of a step the checkpoint does not cover (written before a kill) is dropped on resume.
    writeFileSync(join(split, 'metrics.csv'), `${readFileSync(join(split, 'metrics.csv'), 'utf8')}3,0.5\n`);
    const second = await runIn(split, config);
    assert.equal(second.resumedFrom, 3);
    assert.deepEqual(second.evalBefore, result.evalBefore, 'the score before comes from evaluations.json');
    assert.deepEqual(second.evalAfter, result.evalAfter);
    assert.deepEqual(untimed(second.metrics), untimed(result.metrics));
    const rows = csvRows(join(split, 'metrics.csv'));
    assert.deepEqual([rows.length, jsonlLines(join(split, 'metrics.jsonl'))], [6, 6]);
    assert.deepEqual(rows.slice(0, 3), kept);
    assert.equal(readdirSync(join(split, 'tensorboard')).length, 2, 'one event file per session');
    // Resumed once more when finished: nothing trains and nothing is scored again.
    writeFileSync(join(split, 'evaluations.json'), JSON.stringify({ before: result.evalBefore, after: { ...result.evalAfter!, perSeed: [9] } }));
    const again = await runIn(split, config);
    assert.deepEqual(again.evalAfter!.perSeed, [9], 'the recorded score is kept');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('marft train: eval_before and eval_after in the final line; plain progress lines on a pipe', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'marft-train-lines-'));
  try {
    const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;
    const r = await runCli({ args: ['train', example, '--run-dir', join(root, 'run'), '--set', 'train.steps=5', '--set', 'log.every=2'] });
    assert.equal(r.status, 0, r.stderr);
    const last = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const recorded = evaluations(join(root, 'run'));
    assert.deepEqual([last.eval_before, last.eval_after], [recorded.before.score, recorded.after.score]);
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(lines[0]!, /^marft train: held-out score before training \(step 0\): \d\.\d{4} \(2 seeds × \d+ problems\)$/);
    assert.deepEqual(lines.slice(1, -1).map((l) => /^marft train: step (\d)\/5  score \d\.\d{3} vloss \d\.\d{4} ev \S+  \d+s elapsed, \d+s left, \d+ tok\/s$/.exec(l)?.[1]), ['1', '2', '4', '5']);
    assert.match(lines[lines.length - 1]!, /^marft train: held-out score after training \(step 5\): /);
    const quiet = await runCli({ args: ['train', example, '--run-dir', join(root, 'quiet'), '--set', 'train.steps=2', '--no-progress'] });
    assert.deepEqual([quiet.status, quiet.stderr], [0, '']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
