// One writer per run folder: a second process (a --resume started while the run trains) is refused
// in one line naming the holder's pid, and the run's metrics stay one clean sequence; a lock left by
// a killed process is taken over with a notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { acquireRunLock } from '../../src/runs/run-lock.ts';
import { RunLockedError } from '../../src/runs/run-errors.ts';
import { noticeLog, runIn, tabularConfig } from './reliability-fixtures.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;

/** The pid of a process that has exited (a node that does nothing). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function stepsIn(runDir: string): number[] {
  const file = join(runDir, 'metrics.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.endsWith('}')).map((l) => (JSON.parse(l) as { step: number }).step);
}

test('a second writer is refused while a run trains (one line naming the pid); after kill -9 the lock is taken over and the metrics are one sequence', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-lock-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, [
    'seed: 3', 'task: { name: coordination-game, options: { symbols: 4, dependency: true } }', 'model: { engine: tabular }',
    'actor: { klCoef: 0, optim: { lr: 0.1 } }', 'critic: { optim: { lr: 0.1 } }', 'rollout: { batchSize: 256, maxNewTokens: 1 }',
    'train: { steps: 100000, checkpointEvery: 5 }', '',
  ].join('\n'));
  const run = join(dir, 'run');
  const first = spawn(process.execPath, [cli, 'train', config, '--run-dir', run, '--no-progress'], { stdio: 'ignore' });
  let exited = false;
  const gone = new Promise<void>((res) => first.on('exit', () => { exited = true; res(); }));
  try {
    while (!exited && stepsIn(run).length < 2) await new Promise((res) => setTimeout(res, 10));
    assert.ok(!exited, 'the first run ended before a second writer could start');
    const lock = JSON.parse(readFileSync(join(run, '.lock'), 'utf8')) as { pid: number; host: string };
    assert.deepEqual([lock.pid, lock.host], [first.pid, hostname()]);

    const second = spawnSync(process.execPath, [cli, 'train', '--resume', run, '--no-progress'], { encoding: 'utf8' });
    assert.equal(second.status, 2, second.stderr);
    assert.equal(second.stderr.trim().split('\n').length, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`^marft train: .*run is being trained by process ${first.pid} \\(since `));
    assert.ok(!exited, 'the first run kept training');
  } finally {
    first.kill('SIGKILL');
    await gone;
  }
  const steps = stepsIn(run);
  assert.deepEqual(steps, steps.map((_, i) => i), 'metrics.jsonl holds each step once, in order');

  // The killed process's lock is taken over (with a notice), its leftovers removed, and the run continues.
  assert.ok(existsSync(join(run, '.lock')));
  const resumedConfig = parseConfig(JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')));
  const { notices, notice } = noticeLog();
  const result = await runIn(run, resumedConfig, { notice, stopAtStep: steps.length + 2 });
  assert.ok(notices.some((n) => new RegExp(`locked by process ${first.pid} .*no longer running; taking the lock over`).test(n)), notices.join('\n'));
  assert.deepEqual(result.metrics.map((m) => m.step), result.metrics.map((_, i) => i));
  assert.ok(!existsSync(join(run, '.lock')), 'the lock is released at the end');
});

test('acquireRunLock: a live holder is refused, a dead one taken over, an unreadable lock replaced; release removes only our own lock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-lock-unit-'));
  const { notices, notice } = noticeLog();
  const held = await acquireRunLock(dir, notice);
  await assert.rejects(acquireRunLock(dir, notice), (err: Error) => err instanceof RunLockedError && err.message.includes(`process ${process.pid}`));
  await held.release();
  assert.ok(!existsSync(join(dir, '.lock')));

  const dead = deadPid();
  writeFileSync(join(dir, '.lock'), JSON.stringify({ pid: dead, host: hostname(), startedAt: 'then' }));
  const taken = await acquireRunLock(dir, notice);
  assert.match(notices.pop()!, new RegExp(`locked by process ${dead} \\(since then\\), which is no longer running; taking the lock over`));
  assert.equal((JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')) as { pid: number }).pid, process.pid);
  await taken.release();

  writeFileSync(join(dir, '.lock'), '{"pid": 12');
  await (await acquireRunLock(dir, notice)).release();
  assert.match(notices.pop()!, /locked by an unreadable lock file/);

  // Another machine's pid cannot be checked: refused, with the way out.
  writeFileSync(join(dir, '.lock'), JSON.stringify({ pid: dead, host: 'elsewhere', startedAt: 'then' }));
  await assert.rejects(acquireRunLock(dir, notice), (err: Error) => err instanceof RunLockedError && /process \d+ on host elsewhere .*delete .*\.lock/.test(err.message));
  // A lock that is no longer ours (taken over meanwhile) is left alone by release.
  rmSync(join(dir, '.lock'));
  const mine = await acquireRunLock(dir, notice);
  writeFileSync(join(dir, '.lock'), JSON.stringify({ pid: dead, host: 'elsewhere', startedAt: 'later' }));
  await mine.release();
  assert.ok(existsSync(join(dir, '.lock')));
});

test('a caller that took the lock itself (before writing into the folder) hands it to train, which keeps it held', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-lock-given-'));
  const lock = await acquireRunLock(dir, noticeLog().notice);
  const result = await runIn(dir, tabularConfig(), { lock, stopAtStep: 2 });
  assert.equal(result.metrics.length, 2);
  assert.equal((JSON.parse(readFileSync(join(dir, '.lock'), 'utf8')) as { pid: number }).pid, process.pid, 'still held after train');
  await assert.rejects(runIn(dir, tabularConfig(), { stopAtStep: 3 }), RunLockedError);
  await lock.release();
  assert.equal((await runIn(dir, tabularConfig(), { stopAtStep: 3 })).resumedFrom, 2);
});
