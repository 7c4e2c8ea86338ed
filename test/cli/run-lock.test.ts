// `marft train` takes the run folder's lock before it writes anything there: a second writer is
// refused in one line and leaves the running run's config.json as it was (it was rewritten before).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertUserError, runAll } from './spawn-cli.ts';

const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;

test('a run folder locked by a live process: train and train --resume are refused and write nothing', async () => {
  const run = join(mkdtempSync(join(tmpdir(), 'marft-cli-lock-')), 'run');
  mkdirSync(run);
  // This test's process is alive: to the CLI's child process it is a writer that holds the run.
  const lock = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: 'earlier' });
  writeFileSync(join(run, '.lock'), lock);
  const config = JSON.stringify({ task: { name: 'coordination-game' }, model: { engine: 'tabular' }, seed: 7 });
  writeFileSync(join(run, 'config.json'), config);
  const [fresh, resumed] = await runAll([
    { args: ['train', example, '--run-dir', run, '--no-progress', '--set', 'train.steps=1'] },
    { args: ['train', '--resume', run, '--no-progress'] },
  ]);
  const held = new RegExp(`^marft train: .*run is being trained by process ${process.pid} \\(since earlier\\)`);
  assertUserError(fresh!, held, 'a fresh run into a locked folder');
  assertUserError(resumed!, held, 'a resume of a locked folder');
  assert.equal(readFileSync(join(run, 'config.json'), 'utf8'), config, 'config.json was rewritten');
  assert.equal(readFileSync(join(run, '.lock'), 'utf8'), lock, 'the lock was touched');
});
