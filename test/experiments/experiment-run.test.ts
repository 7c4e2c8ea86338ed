// `marft experiment` end to end on two rows (action-level MARFT and IPPO on the coordination game's
// tiny random model), two training seeds, one column, two training steps per run: the table equals
// the mean and sample std of results.jsonl; each result equals `marft eval` on that run's checkpoint;
// a rerun trains and evaluates nothing; an experiment stopped after its first run, and then with that
// run's last checkpoint gone (a run stopped part-way), resumes to the uninterrupted experiment's table;
// results.json and the curves are rebuilt from results.jsonl, so a grid killed in the middle of a cell
// (SIGKILL of the training child, or of the runner while it evaluates) and rerun writes the same files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readExperimentFile } from '../../src/experiments/experiment-file.ts';
import { ExperimentStopped, planExperiment, planText, runExperiment } from '../../src/experiments/runner.ts';
import { sampleStd, type ExperimentTable } from '../../src/experiments/table.ts';
import type { ExperimentResult } from '../../src/experiments/results.ts';
import type { ExperimentResultsJson } from '../../src/experiments/results-json.ts';
import { assertUserError, runAll, runCli } from '../cli/spawn-cli.ts';
import { spawn } from 'node:child_process';

const FILE = fileURLToPath(new URL('./coordination-two-rows.yaml', import.meta.url));
const CONFIG = fileURLToPath(new URL('../../examples/coordination-embedded.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-experiment-'));
const whole = join(root, 'whole');
after(() => rmSync(root, { recursive: true, force: true }));

/** The results as written, less the format version every line carries (test/experiments/results.test.ts checks it). */
const readJsonl = (file: string): ExperimentResult[] => readFileSync(file, 'utf8').trim().split('\n').map((l) => {
  const { version, ...result } = JSON.parse(l) as ExperimentResult & { version: number };
  assert.equal(version, 1);
  return result;
});
/** table.json, less its format and version. */
const readTable = (out: string): ExperimentTable => {
  const { format, version, ...table } = JSON.parse(readFileSync(join(out, 'table.json'), 'utf8')) as ExperimentTable & { format: string; version: number };
  assert.deepEqual([format, version], ['marft-experiment-table', 1]);
  return table;
};
const readResultsJson = (out: string): ExperimentResultsJson => JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as ExperimentResultsJson;
/** Everything an experiment derives from its results: table.json, results.json and the curves, byte for byte. */
const outputs = (out: string): Record<string, string> => Object.fromEntries(['table.json', 'table.md', 'results.json', 'curves/coordination.svg'].map((f) => [f, readFileSync(join(out, f), 'utf8')]));

/** The processes whose parent is `pid` (Linux /proc). */
function childPids(pid: number): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(n)] : [];
    } catch {
      return []; // ended while being read
    }
  });
}

/** Resolves with the first child of `pid` once it exists (the runner logs a start line just before it spawns). */
function firstChild(pid: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const poll = setInterval(() => {
      const child = childPids(pid)[0];
      if (child !== undefined) {
        clearInterval(poll);
        resolve(child);
      } else if (Date.now() - t0 > 60_000) {
        clearInterval(poll);
        reject(new Error(`process ${pid} started no child within 60 s`));
      }
    }, 5);
  });
}

/** Resolves once `done()` holds, polling every 10 ms. */
function until(done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      if (done()) {
        clearInterval(poll);
        resolve();
      }
    }, 10);
  });
}

/**
 * Runs `marft experiment FILE --out OUT`, calling `onLine` with the runner's process and the stderr
 * seen so far on every chunk; resolves with the exit status, signal and stderr.
 */
function experimentProcess(out: string, onLine: (pid: number, stderr: string) => void): Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const cli = fileURLToPath(new URL('../../bin/marft.mjs', import.meta.url));
  const child = spawn(process.execPath, [cli, 'experiment', FILE, '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  return new Promise((resolve) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      onLine(child.pid!, stderr);
    });
    child.on('close', (status, signal) => resolve({ status, signal, stderr }));
  });
}

/** Every file of every run folder with its size and modification time: a retrained or re-evaluated run changes some. */
function runFiles(out: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else files.set(p, `${s.size} ${s.mtimeMs}`);
    }
  };
  walk(join(out, 'runs'));
  return files;
}

let wholeRun: { status: number | null; stdout: string; stderr: string };
before(async () => {
  wholeRun = await runCli({ args: ['experiment', FILE, '--out', whole] });
});

test('the experiment trains 2 rows × 2 seeds, evaluates each once, and reports progress with times', () => {
  assert.equal(wholeRun.status, 0, wholeRun.stderr);
  const results = readJsonl(join(whole, 'results.jsonl'));
  assert.deepEqual(results.map((r) => [r.row, r.seed, r.column]), [['marft', 0, 'coordination'], ['marft', 1, 'coordination'], ['ippo', 0, 'coordination'], ['ippo', 1, 'coordination']]);
  for (const r of results) {
    assert.equal(r.step, 2);
    assert.equal(r.perSeed.length, 2);
    assert.equal(r.checkpoint, join(whole, 'runs', r.row, `seed-${r.seed}`, 'checkpoints', 'step-000002'));
    assert.equal(readFileSync(join(whole, 'runs', r.row, `seed-${r.seed}`, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 2);
    // Scored once, by `marft eval` on the column: the trainer's own before/after scoring is skipped (--no-eval).
    assert.equal(existsSync(join(whole, 'runs', r.row, `seed-${r.seed}`, 'evaluations.json')), false, 'the run was trained with --no-eval');
  }
  assert.equal(wholeRun.stderr.match(/^experiment: train \S+ seed \d: done in \d+\.\d s/gm)?.length, 4, wholeRun.stderr);
  assert.equal(wholeRun.stderr.match(/^experiment: eval \S+ seed \d on coordination: done in \d+\.\d s, score /gm)?.length, 4, wholeRun.stderr);
  // The two algorithms trained differently (the rows are not one run twice).
  assert.notDeepEqual(results.filter((r) => r.row === 'marft').map((r) => r.perSeed), results.filter((r) => r.row === 'ippo').map((r) => r.perSeed));
  // Progress: the plan, then after each training and each evaluation the cells done of 4.
  assert.match(wholeRun.stderr, /^experiment: 4 cells \(row × seed × column\): 0 done, 4 to evaluate; 4 of 4 runs to train or resume \(8 steps\)$/m);
  const progress = wholeRun.stderr.match(/^experiment: progress: .*$/gm) ?? [];
  assert.equal(progress.length, 8, wholeRun.stderr);
  assert.match(progress[0]!, /^experiment: progress: 0 of 4 cells done, 1 of 4 runs trained; \d+\.\d s elapsed, time left unknown until an evaluation has finished$/);
  assert.match(progress[1]!, /^experiment: progress: 1 of 4 cells done, 1 of 4 runs trained; .* elapsed, about .* left$/);
  assert.match(progress[7]!, /^experiment: progress: 4 of 4 cells done, 4 of 4 runs trained; .* elapsed, about 0\.0 s left$/);
  // stdout is still the table, then the JSON line.
  const stdout = wholeRun.stdout.trim().split('\n');
  assert.equal(stdout[0], '# coordination-two-rows');
  assert.deepEqual(JSON.parse(stdout.pop()!), { out: whole, table: join(whole, 'table.md') });
});

test('results.json: per method and benchmark the table\'s mean and std, each seed\'s score in seed order, its step and pass@k', () => {
  const results = readJsonl(join(whole, 'results.jsonl'));
  const table = readTable(whole);
  const json = readResultsJson(whole);
  assert.deepEqual(Object.keys(json.methods), ['marft', 'ippo']);
  for (const row of ['marft', 'ippo']) {
    const cell = json.methods[row]!.benchmarks.coordination!;
    const mine = results.filter((r) => r.row === row).sort((a, b) => a.seed - b.seed);
    const tableCell = table.rows.find((r) => r.row === row)!.cells.coordination!;
    assert.deepEqual([cell.mean, cell.std, cell.n], [tableCell.mean, tableCell.std, tableCell.n], `${row}: the table's numbers`);
    assert.deepEqual(cell.seeds, mine.map((r) => r.score));
    assert.deepEqual([cell.trainingSeeds, cell.steps], [[0, 1], [2, 2]]);
    assert.equal(cell.passAtK!.length, 2, 'eval.seeds = 2: pass@1 and pass@2');
    for (const [i, p] of cell.passAtK!.entries()) {
      const xs = mine.map((r) => r.passAtK![i]!);
      const mean = (xs[0]! + xs[1]!) / 2;
      assert.deepEqual([p.k, p.seeds], [i + 1, xs]);
      assert.ok(Math.abs(p.mean - mean) < 1e-12 && Math.abs(p.std! - Math.abs(xs[0]! - xs[1]!) / Math.SQRT2) < 1e-12, `${row} pass@${i + 1}`);
    }
  }
  const svg = readFileSync(join(whole, 'curves', 'coordination.svg'), 'utf8');
  for (const row of ['marft', 'ippo']) {
    assert.ok(svg.includes(`${row}: training reward (score_mean, mean over 2 seeds)`), row);
    assert.ok(svg.includes(`${row}: coordination held-out score (mean over 2 seeds)`), row);
  }
});

test('each table cell is the mean and sample std (n − 1) of the results; average = the one column here', () => {
  const results = readJsonl(join(whole, 'results.jsonl'));
  const table = readTable(whole);
  assert.deepEqual(table.columns, ['coordination', 'average']);
  for (const row of ['marft', 'ippo']) {
    const xs = results.filter((r) => r.row === row).map((r) => r.score);
    const mean = (xs[0]! + xs[1]!) / 2;
    const std = Math.sqrt(((xs[0]! - mean) ** 2 + (xs[1]! - mean) ** 2) / 1);
    const cells = table.rows.find((r) => r.row === row)!.cells;
    for (const c of ['coordination', 'average']) {
      assert.ok(Math.abs(cells[c]!.mean - mean) < 1e-12, `${row} ${c} mean`);
      assert.ok(Math.abs(cells[c]!.std! - std) < 1e-12, `${row} ${c} std`);
      assert.equal(cells[c]!.n, 2);
    }
  }
  assert.equal(sampleStd([1, 3]), Math.SQRT2);
  assert.equal(sampleStd([1]), null);
  const md = readFileSync(join(whole, 'table.md'), 'utf8');
  assert.match(md, /sample standard deviation \(n − 1\)/);
  const marft = table.rows[0]!.cells.coordination!;
  assert.ok(md.includes(`| marft | ${marft.mean.toFixed(4)} ± ${marft.std!.toFixed(4)} (n=2) |`), md);
});

test('each result equals what marft eval gives on that run\'s checkpoint', async () => {
  const results = readJsonl(join(whole, 'results.jsonl'));
  const sets = ['train.steps=2', 'train.checkpointEvery=1', 'rollout.batchSize=8', 'eval.seeds=2'];
  const evals = await runAll(results.map((r) => ({
    args: ['eval', CONFIG, '--checkpoint', join(whole, 'runs', r.row, `seed-${r.seed}`), ...[...sets, ...(r.row === 'ippo' ? ['algorithm=ippo'] : []), `seed=${r.seed}`].flatMap((s) => ['--set', s])],
  })), 2);
  results.forEach((r, i) => {
    assert.equal(evals[i]!.status, 0, evals[i]!.stderr);
    const line = JSON.parse(evals[i]!.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const { score, perSeed, passAtK, problems, step, checkpoint } = line;
    assert.deepEqual({ score: r.score, perSeed: r.perSeed, passAtK: r.passAtK, problems: r.problems, step: r.step, checkpoint: r.checkpoint }, { score, perSeed, passAtK, problems, step, checkpoint }, `${r.row} seed ${r.seed}`);
  });
});

test('a rerun of a finished experiment trains and evaluates nothing', async () => {
  const results = readFileSync(join(whole, 'results.jsonl'), 'utf8');
  const files = runFiles(whole);
  const again = await runCli({ args: ['experiment', FILE, '--out', whole] });
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /start/, again.stderr);
  assert.equal(readFileSync(join(whole, 'results.jsonl'), 'utf8'), results);
  assert.deepEqual(runFiles(whole), files);
  assert.match(again.stderr, /^experiment: 4 cells \(row × seed × column\): 4 done, 0 to evaluate; 0 of 4 runs to train or resume \(0 steps\)$/m);
  const dry = await runCli({ args: ['experiment', FILE, '--out', whole, '--dry-run'] });
  assert.match(dry.stdout, /to do: 0 runs to train or resume, 0 evaluations/);
  // --table rebuilds the same table, results.json and curves from the results alone.
  const before = outputs(whole);
  for (const f of ['table.json', 'results.json', 'curves']) rmSync(join(whole, f), { recursive: true });
  assert.equal((await runCli({ args: ['experiment', FILE, '--out', whole, '--table'] })).status, 0);
  assert.deepEqual(outputs(whole), before);
});

test('an experiment stopped after its first run, then with a run cut part-way, resumes to the same table', async () => {
  const out = join(root, 'stopped');
  const exp = await readExperimentFile(FILE);
  const lines: string[] = [];
  const opts = { out, rows: exp.rows, sets: [], log: (l: string) => void lines.push(l) };
  await assert.rejects(runExperiment(exp, { ...opts, stopAfterTrainedRuns: 1 }), ExperimentStopped);
  assert.equal(existsSync(join(out, 'results.jsonl')), false, 'stopped before the first evaluation');
  assert.ok(existsSync(join(out, 'runs', 'marft', 'seed-0', 'checkpoints', 'step-000002')));
  // The first run of the second seed stopped part-way: its last checkpoint is removed, as if killed
  // between its two checkpoints (a later resume restores its metrics from step 1's copy).
  await assert.rejects(runExperiment(exp, { ...opts, stopAfterTrainedRuns: 1 }), ExperimentStopped);
  assert.equal(readJsonl(join(out, 'results.jsonl')).length, 1, 'the first run was evaluated, not retrained');
  rmSync(join(out, 'runs', 'marft', 'seed-1', 'checkpoints', 'step-000002'), { recursive: true });
  const plan = planText(exp, await planExperiment(exp, opts, () => {}), out);
  assert.match(plan, /marft seed 0: trained \(step 2\), skipped/);
  assert.match(plan, /marft seed 1: resume from step 1 of 2/);
  assert.match(plan, /to do: 3 runs to train or resume, 3 evaluations/);
  lines.length = 0;
  const table = await runExperiment(exp, opts);
  assert.equal(lines.filter((l) => /train marft seed 0|eval marft seed 0/.test(l)).length, 0, lines.join('\n'));
  assert.ok(lines.some((l) => /train marft seed 1: start \(resume from step 1 of 2\)/.test(l)), lines.join('\n'));
  assert.deepEqual(table, readTable(whole));
  assert.deepEqual(readResultsJson(out), readResultsJson(whole));
  const scores = (rs: ExperimentResult[]): unknown => rs.map((r) => [r.row, r.seed, r.score, r.perSeed]).sort();
  assert.deepEqual(scores(readJsonl(join(out, 'results.jsonl'))), scores(readJsonl(join(whole, 'results.jsonl'))));
});

test('--seeds runs a grid a seed at a time: seed 1 alone leaves seed 0 missing, then seed 0 completes the uninterrupted table', async () => {
  const out = join(root, 'by-seed');
  const first = await runCli({ args: ['experiment', FILE, '--out', out, '--seeds', '1'] });
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual([...new Set(readJsonl(join(out, 'results.jsonl')).map((r) => r.seed))], [1]);
  assert.equal(existsSync(join(out, 'runs', 'marft', 'seed-0')), false, 'seed 0 was not trained');
  assert.match(readFileSync(join(out, 'table.md'), 'utf8'), /n=1 of 2/);
  const second = await runCli({ args: ['experiment', FILE, '--out', out, '--seeds', '0'] });
  assert.equal(second.status, 0, second.stderr);
  assert.deepEqual(readTable(out), readTable(whole));
  assert.deepEqual(readResultsJson(out), readResultsJson(whole));
});

test('marft experiment stopped by SIGTERM while a run trains stops its child, frees its folder, and a rerun gives the same table', async () => {
  const out = join(root, 'signalled');
  const cli = fileURLToPath(new URL('../../bin/marft.mjs', import.meta.url));
  const child = spawn(process.execPath, [cli, 'experiment', FILE, '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const status = await new Promise<number | null>((resolve) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      // Sent while the second run trains (its start line is printed just before its child starts).
      if (/train marft seed 1: start/.test(stderr) && !child.killed) child.kill('SIGTERM');
    });
    child.on('close', (code) => resolve(code));
  });
  assert.equal(status, 143, stderr);
  assert.match(stderr.trimEnd().split('\n').pop()!, /^marft experiment: stopped by SIGTERM; run the same command again to continue$/);
  assert.equal(existsSync(join(out, '.lock')), false, 'the experiment\'s lock was released');
  assert.equal(readJsonl(join(out, 'results.jsonl')).length, 1);
  const again = await runCli({ args: ['experiment', FILE, '--out', out] });
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /marft seed 0/, 'the finished run is neither retrained nor re-evaluated');
  assert.deepEqual(readTable(out), readTable(whole));
  assert.deepEqual(outputs(out), outputs(whole));
});

test('SIGKILL of the training child in the middle of a run, then a rerun: the same results.json, table and curves as the uninterrupted grid', async () => {
  const out = join(root, 'child-killed');
  let armed = false;
  let killing: Promise<void> | undefined;
  const first = await experimentProcess(out, (runner, stderr) => {
    if (armed || !/train ippo seed 0: start/.test(stderr)) return;
    armed = true;
    // The training child, killed once its first checkpoint exists (between its two checkpoints).
    killing = firstChild(runner).then(async (child) => {
      await until(() => existsSync(join(out, 'runs', 'ippo', 'seed-0', 'checkpoints', 'step-000001')) || !childPids(runner).includes(child));
      process.kill(child, 'SIGKILL');
    });
  });
  await killing;
  assert.notEqual(first.status, 0, first.stderr);
  assert.match(first.stderr, /row ippo seed 0: marft train crashed \(SIGKILL; its output is above\); run the experiment again to continue/);
  assert.equal(readJsonl(join(out, 'results.jsonl')).length, 2, 'the marft row was evaluated before the kill');
  const again = await runCli({ args: ['experiment', FILE, '--out', out] });
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /marft seed/, 'the finished row is neither retrained nor re-evaluated');
  assert.match(again.stderr, /train ippo seed 0: start \(resume from step 1 of 2\)/, 'killed between its checkpoints');
  assert.deepEqual(readResultsJson(out), readResultsJson(whole));
  assert.deepEqual(outputs(out), outputs(whole));
});

test('SIGKILL of the runner while it evaluates a cell, then a rerun: the cell is evaluated again and the outputs are the uninterrupted grid\'s', async () => {
  const out = join(root, 'runner-killed');
  let armed = false;
  let killing: Promise<void> | undefined;
  const first = await experimentProcess(out, (runner, stderr) => {
    if (armed || !/eval marft seed 1 on coordination: start/.test(stderr)) return;
    armed = true;
    killing = firstChild(runner).then((evalChild) => {
      process.kill(runner, 'SIGKILL');
      // The orphaned evaluation would finish on its own, writing nothing; it is ended here so that no process outlives the test.
      process.kill(evalChild, 'SIGKILL');
    });
  });
  await killing;
  assert.equal(first.signal, 'SIGKILL', first.stderr);
  assert.equal(readJsonl(join(out, 'results.jsonl')).length, 1, 'the cell in progress has no result');
  assert.ok(existsSync(join(out, '.lock')), 'the killed runner left its lock');
  const again = await runCli({ args: ['experiment', FILE, '--out', out] });
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stderr, /was locked by process \d+ .*which is no longer running; taking the lock over/);
  assert.match(again.stderr, /eval marft seed 1 on coordination: start/);
  assert.doesNotMatch(again.stderr, /train marft seed 1: start/, 'its run finished before the kill');
  assert.deepEqual(readResultsJson(out), readResultsJson(whole));
  assert.deepEqual(outputs(out), outputs(whole));
});

test('a base row is scored as marft eval --base under each seed, untrained; --rows leaves the other row missing', async () => {
  const out = join(root, 'base');
  const file = join(root, 'base.yaml');
  writeFileSync(file, [
    'name: base-rows',
    'seeds: [3, 4]',
    'set: { eval.seeds: 2 }',
    'rows:',
    `  - { name: untrained, config: ${CONFIG}, base: true }`,
    `  - { name: trained, config: ${CONFIG} }`,
    'columns:',
    '  - { name: coordination }',
    '',
  ].join('\n'));
  const r = await runCli({ args: ['experiment', file, '--out', out, '--rows', 'untrained'] });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /experiment: train/);
  assert.equal(existsSync(join(out, 'runs')), false, 'a base row has no run folder');
  const results = readJsonl(join(out, 'results.jsonl'));
  const evals = await runAll([3, 4].map((s) => ({ args: ['eval', CONFIG, '--base', '--set', 'eval.seeds=2', '--set', `seed=${s}`] })), 2);
  assert.deepEqual(results, evals.map((e, i) => {
    const line = JSON.parse(e.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    return { row: 'untrained', seed: [3, 4][i], column: 'coordination', score: line.score, perSeed: line.perSeed, passAtK: line.passAtK, problems: line.problems, step: null, checkpoint: null };
  }));
  const md = readFileSync(join(out, 'table.md'), 'utf8');
  assert.match(md, /\| untrained \| \d\.\d{4} ± \d\.\d{4} \(n=2\) \| \d\.\d{4} ± \d\.\d{4} \(n=2\) \|/);
  assert.match(md, /\| trained \| missing \| missing \|/);
});

test('a run folder trained with another configuration is refused in one line, naming the key', async () => {
  const r = await runCli({ args: ['experiment', FILE, '--out', whole, '--set', 'actor.optim.lr=0.001', '--dry-run'] });
  assertUserError(r, /^marft experiment: row marft seed 0: .*runs\/marft\/seed-0 was trained with another configuration \(actor\.optim\.lr 0\.005 → 0\.001\); give the experiment another --out/, 'changed configuration');
});
