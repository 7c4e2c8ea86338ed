// The dashboard's server without a browser: which runs it finds (run folders, an experiment's rows),
// its JSON endpoints (incremental metrics, a cut metrics file, samples, errors), the charting library
// served from node_modules, and `marft dashboard`'s one-line errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverRuns } from '../../src/dashboard/run-sources.ts';
import { startDashboard } from '../../src/dashboard/server.ts';
import { MetricsLog } from '../../src/runs/metrics-log.ts';
import { readStepSamples } from '../../src/runs/samples.ts';
import { makeSampleRun, nextMetricsLine } from '../fixtures/sample-run.ts';
import { assertUserError, runInProcess } from '../cli/spawn-cli.ts';

async function folders() {
  const dir = mkdtempSync(join(tmpdir(), 'marft-dash-'));
  const run = join(dir, 'run');
  const exp = join(dir, 'exp');
  await makeSampleRun(run, { kind: 'marft', steps: 8, samplesEvery: 4, episodesPerStep: 2 });
  await makeSampleRun(join(exp, 'runs', 'SA+GRPO', 'seed-0'), { kind: 'mas-opd', steps: 3, samplesEvery: 2, episodesPerStep: 1 });
  await makeSampleRun(join(exp, 'runs', 'SA+GRPO', 'seed-1'), { kind: 'mas-opd', steps: 2, samplesEvery: 2, episodesPerStep: 1 });
  writeFileSync(join(exp, 'results.jsonl'), '');
  const waiting = join(dir, 'waiting');
  mkdirSync(waiting);
  return { dir, run, exp, waiting };
}

test('the runs of a dashboard: run folders as given, an experiment’s rows with row and seed, an empty folder as a run to come', async () => {
  const f = await folders();
  try {
    const runs = discoverRuns([f.run, f.exp, f.waiting, f.run], f.dir);
    assert.deepEqual(runs.map((r) => [r.id, r.row, r.seed]), [
      ['run', null, null],
      [join('exp', 'runs', 'SA+GRPO', 'seed-0'), 'SA+GRPO', 0],
      [join('exp', 'runs', 'SA+GRPO', 'seed-1'), 'SA+GRPO', 1],
      ['waiting', null, null],
    ]);
    // The folder above them all: every run below it.
    assert.equal(discoverRuns([f.dir], f.dir).length, 3, 'the empty folder is no run once a parent is given');
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('the JSON endpoints: runs, metrics from a line on (a shorter file resets), samples, and errors by status', async () => {
  const f = await folders();
  const cwd = process.cwd();
  process.chdir(f.dir);
  const d = await startDashboard({ dirs: ['run', 'exp'], port: 0 });
  try {
    const get = async (path: string) => {
      const r = await fetch(new URL(path, d.url));
      return { status: r.status, body: (await r.json()) as Record<string, any> };
    };
    const runs = (await get('/api/runs')).body.runs;
    assert.deepEqual(runs.map((r: any) => [r.id, r.metrics, r.sampleSteps]), [
      ['run', 8, [0, 4]],
      [join('exp', 'runs', 'SA+GRPO', 'seed-0'), 3, [0, 2]],
      [join('exp', 'runs', 'SA+GRPO', 'seed-1'), 2, [0]],
    ]);
    const metrics = await new MetricsLog(join(f.run, 'metrics.jsonl')).read();
    const all = await get('/api/metrics?run=run');
    assert.deepEqual(all.body, { total: 8, reset: false, lines: metrics });
    // What a training run appends arrives from the line the page has on.
    appendFileSync(join(f.run, 'metrics.jsonl'), nextMetricsLine('marft', 8, 9) + '{"step": 9, "score_m');
    const more = await get('/api/metrics?run=run&from=8');
    assert.equal(more.body.total, 9, 'the cut last line is not counted');
    assert.deepEqual(more.body.lines.map((m: any) => m.step), [8]);
    // A resume that cut the file: the page gets all of it again.
    writeFileSync(join(f.run, 'metrics.jsonl'), readFileSync(join(f.run, 'metrics.jsonl'), 'utf8').split('\n').slice(0, 5).join('\n') + '\n');
    const cut = await get('/api/metrics?run=run&from=9');
    assert.deepEqual([cut.body.reset, cut.body.lines.length], [true, 5]);

    const samples = await get('/api/samples?run=run&step=4');
    assert.equal(samples.status, 200);
    assert.deepEqual(samples.body.episodes, JSON.parse(JSON.stringify(await readStepSamples(f.run, 4))));
    assert.deepEqual(await get('/api/samples?run=run&step=3'), { status: 404, body: { error: 'run has no samples for step 3' } });
    assert.equal((await get('/api/samples?run=run&step=x')).status, 400);
    assert.equal((await get('/api/metrics?run=../../etc')).status, 404);
    assert.equal((await get('/api/nothing')).status, 404);
    const file = join(f.run, 'samples', 'step-0.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"version":1', '"version":2'));
    const newer = await get('/api/samples?run=run&step=0');
    assert.equal(newer.status, 422);
    assert.match(newer.body.error, /step-0\.jsonl:1: samples format version 2 is newer than this marft reads/);

    const page = await fetch(new URL('/', d.url));
    assert.match(await page.text(), /<script src="\/vendor\/uPlot\.iife\.min\.js">/);
    const lib = await fetch(new URL('/vendor/uPlot.iife.min.js', d.url));
    assert.equal(lib.status, 200);
    assert.match(await lib.text(), /uPlot/);
  } finally {
    await d.close();
    process.chdir(cwd);
    rmSync(f.dir, { recursive: true, force: true });
  }
});

test('marft dashboard errors are one line: no folder, a missing folder, a file, a bad port, a port in use', async () => {
  const f = await folders();
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as { port: number }).port;
  try {
    const cases: [string[], RegExp][] = [
      [[], /expected at least one RUN_DIR/],
      [[join(f.dir, 'nope')], /nope: no such folder/],
      [[join(f.run, 'metrics.jsonl')], /is a file; the dashboard takes run folders/],
      [[f.run, '--port', 'http'], /--port must be a whole number from 0 to 65535, got 'http'/],
      [[f.run, '--port', '70000'], /--port must be a whole number from 0 to 65535/],
      [[f.run, '--port', String(port)], new RegExp(`port ${port} is in use \\(choose another with --port N, or --port 0 for any free one\\)`)],
    ];
    for (const [args, message] of cases) assertUserError(await runInProcess(['dashboard', ...args]), message, args.join(' '));
  } finally {
    busy.close();
    rmSync(f.dir, { recursive: true, force: true });
  }
});
