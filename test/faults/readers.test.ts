// Faults: readers racing the writer. `marft eval --checkpoint RUN` while RUN trains, with a checkpoint
// every step and only the last two kept (the trainer prunes a checkpoint about every tenth of a
// second): every evaluation succeeds and scores exactly what the same step's checkpoint scores in an
// uninterrupted run that kept them all, and the run's metrics are the uninterrupted run's. In
// process: a reader's snapshot stays whole and loadable when the trainer prunes its checkpoint and
// writes another in its place, and a checkpoint that is damaged and stays so is still reported as
// damaged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInProcess } from '../cli/spawn-cli.ts';
import { checkpointProblem, loadCheckpoint } from '../../src/runs/checkpoint.ts';
import { openCheckpoint } from '../../src/runs/checkpoint-snapshot.ts';
import { DamagedRunError } from '../../src/runs/run-errors.ts';
import { buildRun } from '../../src/run/setup.ts';
import { runIn, tabularConfig } from '../runs/reliability-fixtures.ts';
import { latestStep, marft, metrics, start, tempRoot, waitUntil, writeConfig } from './fault-helpers.ts';

const root = tempRoot('readers');
after(() => rmSync(root, { recursive: true, force: true }));

const steps = 300;
const config = writeConfig(root, 'run', { steps, batch: 64, every: 1, keep: 1 });
const keepAll = writeConfig(root, 'keep-all', { steps, batch: 64, every: 1, keep: 1000 });
const reference = join(root, 'reference');

before(async () => {
  const r = await marft(['train', keepAll, '--run-dir', reference, '--no-progress']);
  assert.equal(r.status, 0, r.stderr);
});

interface EvalLine {
  score: number;
  perSeed: number[];
  step: number;
  checkpoint: string;
}

const lastJson = (stdout: string): EvalLine => JSON.parse(stdout.trim().split('\n').pop()!) as EvalLine;

test('marft eval --checkpoint RUN while RUN trains and prunes: every evaluation succeeds and equals the same step\'s checkpoint evaluated at rest', async () => {
  const run = join(root, 'training');
  const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
  await waitUntil(() => latestStep(run) >= 1, trainer, 'the first checkpoint');
  const seen: EvalLine[] = [];
  // Two readers at a time, started again as soon as one ends, for as long as the run trains.
  const reader = async (): Promise<void> => {
    while (!trainer.done()) {
      const r = await marft(['eval', config, '--checkpoint', run, '--set', 'eval.seeds=1']);
      assert.equal(r.status, 0, `an evaluation during training failed: ${r.stderr}`);
      assert.equal(r.stderr, '', 'a notice or warning while reading a healthy run');
      seen.push(lastJson(r.stdout));
    }
  };
  const readers = await Promise.allSettled([reader(), reader()]);
  if (!trainer.done()) trainer.child.kill('SIGKILL');
  const done = await trainer.exited;
  for (const r of readers) if (r.status === 'rejected') throw r.reason;
  assert.equal(done.status, 0, done.stderr);
  const during = seen.filter((e) => e.step < steps);
  assert.ok(during.length >= 2, `only ${during.length} evaluations ran while the run trained`);
  for (const e of seen) {
    assert.equal(e.checkpoint, join(run, 'checkpoints', `step-${String(e.step).padStart(6, '0')}`));
    const atRest = await runInProcess(['eval', config, '--checkpoint', join(reference, 'checkpoints', `step-${String(e.step).padStart(6, '0')}`), '--set', 'eval.seeds=1']);
    assert.equal(atRest.status, 0, atRest.stderr);
    const expected = lastJson(atRest.stdout);
    assert.deepEqual([e.step, e.score, e.perSeed], [expected.step, expected.score, expected.perSeed], `step ${e.step}`);
  }
  assert.deepEqual(metrics(run), metrics(reference), 'the readers disturbed the run');
});

test('a reader\'s snapshot stays whole when the trainer prunes its checkpoint and writes another in its place; it loads as the checkpoint it was', async () => {
  const run = join(root, 'snapshot');
  await runIn(run, tabularConfig(), { stopAtStep: 3 });
  const ckpt = join(run, 'checkpoints', 'step-000003');
  const adapter = readFileSync(join(ckpt, 'adapters', 'policy', 'tabular_adapter.json'), 'utf8');
  const snapshot = (await openCheckpoint(ckpt))!;
  try {
    assert.equal(snapshot.source, ckpt);
    assert.equal(snapshot.state.step, 3);
    // Pruned, and a folder of the same name written again with other content.
    rmSync(ckpt, { recursive: true });
    mkdirSync(join(ckpt, 'adapters', 'policy'), { recursive: true });
    writeFileSync(join(ckpt, 'adapters', 'policy', 'tabular_adapter.json'), '{}');
    assert.equal(await checkpointProblem(snapshot.dir), null, 'the snapshot changed with the checkpoint');
    const { engine } = await buildRun(tabularConfig());
    try {
      await loadCheckpoint(engine, snapshot.dir, { optimiser: true });
      await engine.saveAdapter('policy', join(root, 'reloaded'));
      assert.equal(readFileSync(join(root, 'reloaded', 'tabular_adapter.json'), 'utf8'), adapter);
    } finally {
      await engine.dispose();
    }
  } finally {
    await snapshot.close();
  }
  assert.deepEqual(readdirSync(join(run, 'checkpoints')).filter((n) => n.includes('.read.tmp-')), [], 'close() left the snapshot');
});

test('a checkpoint that is damaged and stays so is reported as damaged (after the retries a race would need), in one line', async () => {
  const run = join(root, 'damaged');
  await runIn(run, tabularConfig(), { stopAtStep: 3 });
  const ckpt = join(run, 'checkpoints', 'step-000003');
  truncateSync(join(ckpt, 'adapters', 'policy', 'tabular_adapter.json'), 10);
  await assert.rejects(openCheckpoint(ckpt), (err: unknown) => err instanceof DamagedRunError && /^checkpoint .*step-000003 is damaged: adapters\/policy\/tabular_adapter\.json: 10 bytes, the manifest says \d+$/.test(err.message));
  const r = await runInProcess(['eval', config, '--checkpoint', ckpt]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^marft eval: checkpoint .*step-000003 is damaged: /);
});
