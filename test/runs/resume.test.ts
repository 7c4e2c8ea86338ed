// A run killed with SIGKILL (kill -9) in the middle resumes from its last checkpoint and ends with
// exactly the metrics of an uninterrupted run (timings aside), through the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTimingKey } from '../../src/runs/metrics-log.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
const long = process.env.MARFT_LONG_TESTS !== '0';

function metrics(runDir: string): Record<string, unknown>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => {
    const m = JSON.parse(l) as Record<string, unknown>;
    for (const k of Object.keys(m)) if (isTimingKey(k)) delete m[k];
    return m;
  });
}

function latestStep(runDir: string): number {
  const file = join(runDir, 'checkpoints', 'latest.json');
  if (!existsSync(file)) return 0;
  try {
    return Number((JSON.parse(readFileSync(file, 'utf8')) as { dir: string }).dir.slice(5));
  } catch {
    return 0;
  }
}

test('kill -9 mid-run, then --resume: the same metrics as an uninterrupted run', { skip: !long && 'MARFT_LONG_TESTS=0' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-resume-'));
  const config = join(dir, 'config.yaml');
  const steps = 120;
  writeFileSync(config, [
    'algorithm: marft-action', 'seed: 3',
    'task: { name: coordination-game, options: { symbols: 4, dependency: true } }',
    'model: { engine: tabular }', 'actor: { klCoef: 0, optim: { lr: 0.1 } }', 'critic: { optim: { lr: 0.1 } }',
    'rollout: { batchSize: 512, maxNewTokens: 1 }', `train: { steps: ${steps}, checkpointEvery: 7 }`, '',
  ].join('\n'));

  const whole = join(dir, 'whole');
  const r = spawnSync(process.execPath, [cli, 'train', config, '--run-dir', whole, '--no-progress'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);

  const killed = join(dir, 'killed');
  const child = spawn(process.execPath, [cli, 'train', config, '--run-dir', killed, '--no-progress'], { stdio: 'ignore' });
  let finished = false;
  const exited = new Promise<void>((res) => child.on('exit', () => { finished = true; res(); }));
  // Kill once a checkpoint past step 14 exists, between checkpoints.
  while (!finished && latestStep(killed) < 15) await new Promise((res) => setTimeout(res, 5));
  assert.ok(!finished, 'the training process ended before it could be killed');
  child.kill('SIGKILL');
  await exited;
  const atKill = latestStep(killed);
  assert.ok(atKill < steps, `the run finished (step ${atKill}) before it could be killed`);

  const resumed = spawnSync(process.execPath, [cli, 'train', '--resume', killed, '--no-progress'], { encoding: 'utf8' });
  assert.equal(resumed.status, 0, resumed.stderr);
  const summary = JSON.parse(resumed.stdout.trim().split('\n').pop()!) as { resumedFrom: number };
  assert.ok(summary.resumedFrom >= 14 && summary.resumedFrom % 7 === 0, `resumed from ${summary.resumedFrom}`);
  const a = metrics(whole);
  const b = metrics(killed);
  assert.equal(b.length, steps);
  assert.deepEqual(b, a);
});
