// Faults: an engine's processes end with marft. A torch-engine run stopped by SIGTERM disposes the
// torch worker before it exits (one line, exit 143, no process of the run left), and one stopped at
// once (a second request) kills the worker's process group on its way out instead of leaving it to
// finish its command in flight. After each, the resume ends with the uninterrupted run's metrics.
// Long (three torch worker start-ups); needs the torch engine's venv (scripts/setup.sh; CI has it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipWithoutTorch } from '../engine/torch-helpers.ts';
import { assertOneLine, assertResumesToReference, latestStep, leftBehind, marft, metrics, processWith, start, tempRoot, waitUntil } from './fault-helpers.ts';

const skip = skipWithoutTorch || (process.env.MARFT_LONG_TESTS === '0' && 'long test (MARFT_LONG_TESTS=0): three torch worker start-ups');
const root = tempRoot('engines');
after(() => rmSync(root, { recursive: true, force: true }));

// The coordination game's own tiny model (saved to RUN/base), trained by the torch worker on one thread.
const config = join(root, 'torch.yaml');
writeFileSync(config, [
  'algorithm: marft-action', 'seed: 1',
  'task: { name: coordination-game, options: { symbols: 4, dependency: true, hiddenSize: 16 } }',
  'model: { engine: torch, threads: 1, device: cpu }', 'policy: { loraRank: 2, loraAlpha: 4 }',
  'actor: { klCoef: 0, optim: { lr: 0.005 } }', 'critic: { kind: mlp, mlpHidden: [8], optim: { lr: 0.01 } }',
  'rollout: { batchSize: 16, maxNewTokens: 1, temperature: 0 }', 'train: { steps: 12, checkpointEvery: 1 }', '',
].join('\n'));
let reference: Record<string, unknown>[] = [];

before(async () => {
  if (skip) return;
  const r = await marft(['train', config, '--run-dir', join(root, 'whole'), '--no-progress']);
  assert.equal(r.status, 0, r.stderr);
  reference = metrics(join(root, 'whole'));
});

/** Waits (up to 30 s) until no process has `text` in its command line. */
async function gone(text: string): Promise<number[]> {
  const t0 = Date.now();
  while (processWith(text).length > 0 && Date.now() - t0 < 30_000) await new Promise((res) => setTimeout(res, 50));
  return processWith(text);
}

test('torch engine, SIGTERM: the worker is disposed before marft exits (one line, exit 143, no process of the run left); the resume equals an uninterrupted run', { skip, timeout: 600_000 }, async () => {
  const run = join(root, 'stopped');
  const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
  await waitUntil(() => latestStep(run) >= 2, trainer, 'a checkpoint at step 2', 300_000);
  assert.ok(processWith(join(run, 'base')).length > 0, 'no torch worker on the run\'s base model');
  trainer.child.kill('SIGTERM');
  const r = await trainer.exited;
  assert.equal(r.status, 143, r.stderr);
  assertOneLine(r, /^marft train: stopped by SIGTERM after step \d+; every completed step is in checkpoints\/step-\d+; resume with: marft train --resume /, 'torch SIGTERM');
  assert.deepEqual(processWith(run), [], 'a process of the run outlived marft');
  assert.deepEqual(leftBehind(run), []);
  await assertResumesToReference(run, reference, 'torch SIGTERM');
});

test('torch engine, stopped at once: the worker\'s process group is killed on the way out; the resume equals an uninterrupted run', { skip, timeout: 600_000 }, async () => {
  const run = join(root, 'at-once');
  const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
  await waitUntil(() => latestStep(run) >= 2, trainer, 'a checkpoint at step 2', 300_000);
  trainer.child.kill('SIGTERM');
  // Apart, so that they arrive in this order (two pending signals are delivered lowest number first).
  await new Promise((res) => setTimeout(res, 50));
  trainer.child.kill('SIGINT');
  const r = await trainer.exited;
  assert.equal(r.status, 130, r.stderr);
  assertOneLine(r, /^marft train: stopped at once by SIGINT, a second request to stop: the step in flight is lost; it resumes from its last checkpoint: marft train --resume /, 'torch at once');
  assert.deepEqual(await gone(run), [], 'the torch worker outlived marft');
  assert.deepEqual(leftBehind(run), []);
  await assertResumesToReference(run, reference, 'torch at once');
});
