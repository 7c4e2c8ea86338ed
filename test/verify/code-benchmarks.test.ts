// Real benchmarks through `marft verify code`: all 164 HumanEval canonical solutions and all 974
// MBPP reference solutions pass, HumanEval stubs that return None all fail, and a few APPS
// problems (stdin/stdout and call-based) pass with simple correct programs. The full runs are
// long tests; a fast sample runs always. Throughput is reported as a diagnostic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { verifyCode, type CodeTests } from '../../src/verify/code/index.ts';
import { DATA_DIR, humanEvalLine, humanEvalRows, mbppLine, mbppRows, NONE_STUB } from './code-benchmark-inputs.ts';

const long = process.env.MARFT_LONG_TESTS === '0' ? 'long test (MARFT_LONG_TESTS=0)' : false;

interface Verdict {
  id: string | number;
  passed: number;
  total: number;
  results: Array<{ status: string; stderr?: string }>;
}

/** Runs `marft verify code` on the lines; returns the verdicts and programs per second. */
function verifyLines(lines: string[]): { verdicts: Verdict[]; perSecond: number } {
  const dir = mkdtempSync(join(tmpdir(), 'marft-bench-'));
  try {
    writeFileSync(join(dir, 'in.jsonl'), lines.join('\n') + '\n');
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [resolve('bin/marft.mjs'), 'verify', 'code', '--input', join(dir, 'in.jsonl'), '--output', join(dir, 'out.jsonl')], { encoding: 'utf8', timeout: 900_000 });
    const seconds = (performance.now() - t0) / 1000;
    assert.equal(r.status, 0, r.stderr);
    const verdicts = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Verdict);
    assert.equal(verdicts.length, lines.length);
    return { verdicts, perSecond: lines.length / seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const failedIds = (verdicts: Verdict[]): Array<string | number> => verdicts.filter((v) => v.passed !== v.total || v.total === 0).map((v) => v.id);

test('a sample of HumanEval: canonical solutions pass, None stubs fail (in-process API)', async () => {
  const rows = humanEvalRows().filter((_, i) => i % 20 === 0);
  for (const row of rows) {
    const tests: CodeTests = { kind: 'assert', code: `${row.test}\ncheck(${row.entry_point})\n` };
    const good = await verifyCode({ program: row.prompt + row.canonical_solution, tests, timeoutMs: 20_000 });
    assert.deepEqual(good, { passed: 1, total: 1, results: [{ status: 'passed' }] }, row.task_id);
    const stub = await verifyCode({ program: row.prompt + NONE_STUB, tests, timeoutMs: 20_000 });
    assert.equal(stub.passed, 0, row.task_id);
  }
});

test('all 164 HumanEval canonical solutions pass through marft verify code', { skip: long }, (t) => {
  const rows = humanEvalRows();
  assert.equal(rows.length, 164);
  const { verdicts, perSecond } = verifyLines(rows.map((r) => humanEvalLine(r)));
  assert.deepEqual(failedIds(verdicts), []);
  t.diagnostic(`HumanEval canonical: ${perSecond.toFixed(1)} programs/s`);
});

test('all 164 HumanEval stubs that return None fail', { skip: long }, (t) => {
  const { verdicts, perSecond } = verifyLines(humanEvalRows().map((r) => humanEvalLine(r, NONE_STUB)));
  assert.deepEqual(verdicts.filter((v) => v.passed !== 0).map((v) => v.id), []);
  assert.ok(verdicts.every((v) => v.total === 1 && ['wrong_answer', 'runtime_error'].includes(v.results[0]!.status)));
  t.diagnostic(`HumanEval stubs: ${perSecond.toFixed(1)} programs/s`);
});

test('all 974 MBPP reference solutions pass (test_setup_code included)', { skip: long }, (t) => {
  const rows = mbppRows();
  assert.equal(rows.length, 974);
  const { verdicts, perSecond } = verifyLines(rows.map(mbppLine));
  assert.deepEqual(failedIds(verdicts), []);
  t.diagnostic(`MBPP reference: ${perSecond.toFixed(1)} programs/s`);
});

function appsTests(id: number): Array<{ input: string; output: unknown[] }> {
  const rows = readFileSync(join(DATA_DIR, 'apps/selected150_mapcoder.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: number; test_list: Array<{ input: string; output: unknown[] }> });
  const row = rows.find((r) => r.id === id);
  assert.ok(row, `APPS problem ${id}`);
  return row.test_list;
}

test('APPS smoke: a stdin/stdout problem and two call-based problems pass with correct programs, fail with wrong ones', async () => {
  // 1607 "QAQ": count subsequences QAQ (stdin/stdout).
  const qaq = appsTests(1607);
  const stdio: CodeTests = { kind: 'stdio', tests: qaq.map((t) => ({ stdin: t.input, stdout: String(t.output[0]) })) };
  const qaqProgram = 's = input().strip()\nq = qa = qaq = 0\nfor c in s:\n    if c == "Q":\n        qaq += qa\n        q += 1\n    elif c == "A":\n        qa += q\nprint(qaq)\n';
  const good = await verifyCode({ program: qaqProgram, tests: stdio, timeoutMs: 10_000 });
  assert.ok(good.total >= 5);
  assert.equal(good.passed, good.total, JSON.stringify(good.results.filter((r) => r.status !== 'passed')));
  const bad = await verifyCode({ program: qaqProgram.replace('qaq += qa', 'qaq += q'), tests: stdio, timeoutMs: 10_000 });
  assert.ok(bad.passed < bad.total);

  // 2755 multiple_of_index(arr) and 4276 solution(n): one argument each, expected = output[0].
  const callTests = (id: number, fn: string): CodeTests => ({ kind: 'call', fn, cases: appsTests(id).map((t) => ({ args: [JSON.parse(t.input)], expected: t.output[0] as never })) });
  const multiples = await verifyCode({ program: 'def multiple_of_index(arr):\n    return [x for i, x in enumerate(arr) if i and x % i == 0]\n', tests: callTests(2755, 'multiple_of_index'), timeoutMs: 10_000 });
  assert.ok(multiples.total >= 5);
  assert.equal(multiples.passed, multiples.total, JSON.stringify(multiples.results));
  // Returns floats such as 4.0 where 4 is expected: Python's == accepts them, so must we.
  const halves = await verifyCode({ program: 'import math\ndef solution(n):\n    return math.floor(n * 2 + 0.5) / 2\n', tests: callTests(4276, 'solution'), timeoutMs: 10_000 });
  assert.equal(halves.passed, halves.total, JSON.stringify(halves.results));
  const truncating = await verifyCode({ program: 'def solution(n):\n    return int(n * 2) / 2\n', tests: callTests(4276, 'solution'), timeoutMs: 10_000 });
  assert.ok(truncating.passed < truncating.total);
});
