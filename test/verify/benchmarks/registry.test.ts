// The registry of benchmark scorers and `marft verify math --benchmark` / per-line "benchmark".
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCHMARK_NAMES, DATASET_BENCHMARKS, answersEqualUnder, benchmarkScorer, scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';
import { DATASETS } from '../../../src/env/datasets/index.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('the registry names at least the benchmarks of issue 20; an unknown name is a one-line error listing them', () => {
  for (const name of ['math', 'math500', 'gsm8k', 'olympiadbench', 'aime', 'amc23', 'deepscaler']) assert.ok(BENCHMARK_NAMES.includes(name), name);
  assert.throws(() => scoreAnswer('nope', '1', '1'), (e: Error) => e.message === `unknown benchmark "nope" (known: ${BENCHMARK_NAMES.join(', ')})`);
  assert.throws(() => benchmarkScorer('toString'), /unknown benchmark "toString"/, 'not an inherited property');
  for (const dataset of Object.keys(DATASET_BENCHMARKS)) assert.ok(DATASETS[dataset], `${dataset} is a dataset`);
  for (const benchmark of Object.values(DATASET_BENCHMARKS)) assert.ok(BENCHMARK_NAMES.includes(benchmark), benchmark);
});

test("without a benchmark, scoreAnswer and answersEqualUnder are exactly marft's mathAnswersEqual (math-verify's 274 cases)", () => {
  const lines = readFileSync(new URL('../math-verify-cases.jsonl', import.meta.url), 'utf8').trim().split('\n');
  assert.equal(lines.length, 274);
  let trues = 0;
  for (const line of lines) {
    const c = JSON.parse(line) as { gold: string; pred: string };
    const today = mathAnswersEqual(c.gold, c.pred);
    if (today) trues++;
    assert.equal(scoreAnswer(undefined, c.gold, c.pred), today, line);
    assert.equal(answersEqualUnder(undefined, c.gold, c.pred), today, line);
  }
  assert.ok(trues > 100 && trues < 274, 'both verdicts occur');
});

test('scoreAnswer reads pred as a response, answersEqualUnder takes it as the answer', () => {
  assert.equal(scoreAnswer('math', '12', '12'), false, 'MATH finds no box in a bare answer');
  assert.equal(answersEqualUnder('math', '12', '12'), true);
  assert.equal(answersEqualUnder('deepscaler', String.raw`\boxed{12}`, '12'), true, 'the reference is still reduced to its box');
});

function run(args: string[], rows: unknown[]): { status: number | null; out: Array<Record<string, unknown>>; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'marft-verify-benchmark-'));
  dirs.push(dir);
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const r = spawnSync(process.execPath, [resolve('bin/marft.mjs'), 'verify', 'math', '--input', input, ...args], { encoding: 'utf8', timeout: 120_000 });
  const out = r.stdout.trim() === '' ? [] : r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: r.status, out, stderr: r.stderr };
}

test('marft verify math: --benchmark for every line, a line\'s "benchmark" wins (null: marft\'s comparison), "problem" facts, one-line errors', () => {
  const rows = [
    { id: 1, gold: '12', pred: 'The answer is 12.' },
    { id: 2, gold: '12', pred: 'The answer is 12.', benchmark: null },
    { id: 3, gold: '0.64N', pred: String.raw`\boxed{\frac{16}{25}N}`, benchmark: 'olympiadbench' },
    { id: 4, gold: '4.2', pred: String.raw`So the final answer is \boxed{4.28}`, benchmark: 'olympiadbench', problem: { error: '1e-1', answer_type: 'Numerical', unit: '%' } },
    { id: 5, gold: '12', pred: '12', benchmark: 'nope' },
    { id: 6, gold: '12', pred: '12', problem: { error: [1] } },
    { id: 7, gold: '12', pred: '<think>hm</think> \\boxed{12}' },
  ];
  const flag = run(['--benchmark', 'deepscaler'], rows);
  assert.equal(flag.status, 1, flag.stderr);
  assert.deepEqual(flag.out.map((o) => [o['id'], o['equal']]), [[1, false], [2, true], [3, true], [4, true], [7, true]]);
  assert.deepEqual(flag.out[3], { ...rows[3], equal: true }, 'the line comes back with its fields');
  assert.match(flag.stderr, new RegExp(`in\\.jsonl:5: unknown benchmark "nope" \\(known: ${BENCHMARK_NAMES.join(', ')}\\)`));
  assert.match(flag.stderr, /in\.jsonl:6: "problem\.error" must be a number or a string/);
  const plain = run([], rows.filter((r) => r.id !== 5 && r.id !== 6));
  assert.equal(plain.status, 0, plain.stderr);
  assert.deepEqual(plain.out.map((o) => [o['id'], o['equal']]), [[1, true], [2, true], [3, true], [4, true], [7, true]]);
  const bad = run(['--benchmark', 'gsm9k'], rows.slice(0, 1));
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim(), `marft verify: --benchmark: unknown benchmark "gsm9k" (known: ${BENCHMARK_NAMES.join(', ')})`);
  const help = spawnSync(process.execPath, [resolve('bin/marft.mjs'), 'verify', '--help'], { encoding: 'utf8' });
  for (const name of BENCHMARK_NAMES) assert.match(help.stdout, new RegExp(`^ {8}${name} `, 'm'), `--help describes ${name}`);
});
