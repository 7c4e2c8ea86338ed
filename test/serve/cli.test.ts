// `marft serve` as a user runs it: --port 0 prints the URL, the models and a JSON line, the server
// answers, SIGTERM stops it with exit code 0; a wrong folder, a bad flag, --team on a run of another
// task and a port in use are one line each (exit code 2), before or instead of serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertUserError, runCli } from '../cli/spawn-cli.ts';
import { makeTinyRun, type TinyRun } from './tiny-run.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
let dir = '';
let run: TinyRun;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'marft-serve-cli-'));
  run = await makeTinyRun(dir);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('marft serve --port 0 --team prints where it listens and what it serves, answers, and stops on SIGTERM', { timeout: 120_000 }, async () => {
  const child = spawn(process.execPath, [cli, 'serve', run.runDir, '--port', '0', '--team'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const announced = await new Promise<{ url: string; baseUrl: string; models: string[] }>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`marft serve exited (${code}) before listening: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    assert.deepEqual(announced.models, ['base', 'planner', 'solver', 'team']);
    assert.match(stdout, /^marft serve: http:\/\/127\.0\.0\.1:\d+\/v1 \(checkpoint .*step-000001, step 1\)\nmodels: base, planner \(adapter policy-planner\), solver \(adapter policy-solver\), team \(workflow math-duo\)\n/);
    const models = (await (await fetch(`${announced.baseUrl}/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), announced.models);
    const reply = await fetch(`${announced.baseUrl}/completions`, { method: 'POST', body: JSON.stringify({ model: 'planner', prompt: 'Hello', max_tokens: 3 }) });
    assert.equal(reply.status, 200);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, stderr);
  assert.match(stderr, /marft serve: stopped \(SIGTERM\) after 1 requests in 1 engine calls/);
});

test('a wrong folder, a bad flag, --team on another task and a port in use are one line each', { timeout: 120_000 }, async () => {
  assertUserError(await runCli({ args: ['serve', join(dir, 'missing')] }), /^marft serve: .*missing: no such folder$/, 'missing folder');
  assertUserError(await runCli({ args: ['serve', run.modelDir] }), /is neither a checkpoint \(no state\.json\) nor a run folder with checkpoints$/, 'a model folder');
  assertUserError(await runCli({ args: ['serve'] }), /expected exactly one RUN_OR_CHECKPOINT folder/, 'no folder');
  assertUserError(await runCli({ args: ['serve', run.runDir, '--port', '70000'] }), /--port must be an integer in \[0, 65535\], got '70000'/, 'port out of range');
  assertUserError(await runCli({ args: ['serve', run.runDir, '--nope'] }), /unknown option --nope/, 'unknown flag');

  // A coordination-game run (a toy task of token ids, no workflow): --team is refused by name.
  const toy = join(dir, 'toy');
  mkdirSync(toy);
  const config = join(toy, 'coordination.json');
  writeFileSync(config, JSON.stringify({ algorithm: 'ippo', task: { name: 'coordination-game', options: { symbols: 2 } }, model: { engine: 'tabular' }, rollout: { batchSize: 4, maxNewTokens: 1 }, train: { steps: 1 }, eval: { seeds: 1 } }));
  const trained = await runCli({ args: ['train', config, '--run-dir', join(toy, 'run'), '--no-progress'] });
  assert.equal(trained.status, 0, trained.stderr);
  assertUserError(await runCli({ args: ['serve', join(toy, 'run'), '--team'] }), /--team serves a workflow with its environment: it needs a run of task 'workflow' \(this run's task is 'coordination-game'\)$/, '--team on a toy run');

  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    assertUserError(await runCli({ args: ['serve', run.runDir, '--port', String(port)] }), new RegExp(`--port ${port}: the address 127\\.0\\.0\\.1:${port} is in use`), 'port in use');
  } finally {
    taken.close();
  }
});
