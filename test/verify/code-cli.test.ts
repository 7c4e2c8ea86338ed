// `marft verify code|math` from outside: input order kept, malformed lines reported with their
// line numbers without losing the rest, hostile programs judged without harming the command.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isolatedTest, noNamespaces } from '../sandbox/isolated-test.ts';

const BIN = resolve('bin/marft.mjs');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function marft(args: string[], input?: string): { status: number | null; stdout: string; stderr: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'marft-verify-cli-'));
  dirs.push(dir);
  const inputPath = join(dir, 'in.jsonl');
  if (input !== undefined) writeFileSync(inputPath, input);
  const r = spawnSync(process.execPath, [BIN, ...args.map((a) => (a === '@IN' ? inputPath : a.replace('@DIR', dir)))], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, dir };
}

const jsonl = (rows: unknown[]): string => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

test('verify code: one result line per judged line, in input order; malformed lines reported and skipped', () => {
  const input = jsonl([
    { id: 'slow', program: 'import time\ntime.sleep(1)\nprint(int(input()) * 2)', tests: [{ stdin: '21\n', stdout: '42' }, { stdin: '1', stdout: '3' }] },
    '{"id": "broken", "program": ',
    { id: 7, program: 'def f(x): return x * 2', call: { fn: 'f', cases: [{ args: [2], expected: 4 }, { args: ['ab'], expected: 'abab' }, { args: [1], expected: 3 }] } },
    { id: 'noTests', program: 'print(1)' },
    '',
    { id: 'both', program: 'print(1)', assert: 'pass', tests: [] },
    { id: 'asserts', program: 'def g():\n    return 5', assert: 'assert g() == 5' },
    '[1, 2]',
    { id: 'badcase', program: 'x', call: { fn: 'not valid', cases: [] } },
    { id: 'dense', program: 'class Box:\n    def __init__(self, v): self.v = v\ndef twice(b):\n    return b.v * 2', setup: 'b1 = Box(1)\nb2 = Box(2)', assert: ['assert twice(b1) == 2', 'assert twice(b2) == 5', 'assert twice(b2) == 4'] },
  ]);
  const r = marft(['verify', 'code', '--input', '@IN'], input);
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines, [
    { id: 'slow', passed: 1, total: 2, results: [{ status: 'passed' }, { status: 'wrong_answer', stderr: 'line 1 differs' }] },
    { id: 7, passed: 2, total: 3, results: [{ status: 'passed' }, { status: 'passed' }, { status: 'wrong_answer', stderr: 'expected 3, got 2' }] },
    { id: 'asserts', passed: 1, total: 1, results: [{ status: 'passed' }] },
    { id: 'dense', passed: 2, total: 3, results: [{ status: 'passed' }, { status: 'wrong_answer', stderr: lines[3]?.results[1]?.stderr }, { status: 'passed' }] },
  ]);
  assert.match(lines[3].results[1].stderr, /File "test_1.py", line 1[^]*assert twice\(b2\) == 5[^]*AssertionError\n$/);
  assert.match(r.stderr, /in\.jsonl:2: not valid JSON/);
  assert.match(r.stderr, /in\.jsonl:4: needs exactly one of "tests", "assert", "call" \(found none\)/);
  assert.match(r.stderr, /in\.jsonl:6: needs exactly one of "tests", "assert", "call" \(found "tests", "assert"\)/);
  assert.match(r.stderr, /in\.jsonl:8: expected a JSON object/);
  assert.match(r.stderr, /in\.jsonl:9: "call" must be/);
  assert.match(r.stderr, /5 malformed line\(s\) skipped/);
  rmSync(r.dir, { recursive: true, force: true });
});

// Needs namespace isolation: without it a fork bomb would run under marft's own user, unlimited.
isolatedTest('verify code: hostile programs are judged, the command survives and exits 0', noNamespaces, () => {
  const input = jsonl([
    { id: 'forkbomb', program: 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass', tests: [{ stdin: '', stdout: '' }], timeout_s: 1 },
    { id: 'flood', program: 'while True: print("x" * 10000)', tests: [{ stdin: '', stdout: '' }], timeout_s: 5 },
    { id: 'memory', program: 'x = bytearray(2**40)', assert: 'pass' },
    { id: 'loop', program: 'def f(): \n    while True: pass', call: { fn: 'f', cases: [{ args: [], expected: 1 }, { args: [], expected: 1 }] }, timeout_s: 0.5 },
    { id: 'killer', program: 'import os, signal\nos.kill(0, signal.SIGKILL)', assert: 'pass' },
    { id: 'big', program: 'def f(x): return x + 1', call: { fn: 'f', cases: [{ args: [JSON.parse('1')], expected: 2 }] } },
  ]).replace('"args":[1],"expected":2', '"args":[123456789012345678901234567889],"expected":123456789012345678901234567890');
  const r = marft(['verify', 'code', '--input', '@IN', '--concurrency', '3', '--output', '@DIR/out.jsonl'], input);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '');
  const lines = readFileSync(join(r.dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.id, l.passed, l.total, l.results.map((x: { status: string }) => x.status).join(',')]), [
    ['forkbomb', 0, 1, 'timeout'],
    ['flood', 0, 1, 'output_limit'],
    ['memory', 0, 1, 'memory'],
    ['loop', 0, 2, 'timeout,timeout'],
    ['killer', 0, 1, 'killed'],
    ['big', 1, 1, 'passed'],
  ]);
  assert.match(lines[2].results[0].stderr, /MemoryError/);
  rmSync(r.dir, { recursive: true, force: true });
});

test('verify: usage errors exit 2 with one line; --help exits 0', () => {
  const none = marft(['verify', 'code']);
  assert.equal(none.status, 2);
  assert.equal(none.stderr.trim(), 'marft verify: --input is required');
  const what = marft(['verify', '--input', 'x']);
  assert.equal(what.status, 2);
  const missing = marft(['verify', 'code', '--input', '/nonexistent/in.jsonl']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /input file not found/);
  const conc = marft(['verify', 'code', '--input', '@IN', '--concurrency', '0'], '');
  assert.equal(conc.status, 2);
  const badOut = marft(['verify', 'code', '--input', '@IN', '--output', '/nonexistent/dir/out.jsonl'], '');
  assert.equal(badOut.status, 2);
  assert.match(badOut.stderr, /cannot write --output .*ENOENT/);
  const help = marft(['verify', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /marft verify code --input FILE\.jsonl/);
});

test('verify math: each line comes back with "equal"; malformed lines are reported', () => {
  const input = jsonl([{ id: 1, gold: '42', pred: '42', extra: 'kept' }, { id: 2, gold: '42', pred: '43' }, '{"id": 3}', { id: 4, gold: '\\frac{1}{2}', pred: '\\frac{1}{2}' }]);
  const r = marft(['verify', 'math', '--input', '@IN'], input);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l)), [
    { id: 1, gold: '42', pred: '42', extra: 'kept', equal: true },
    { id: 2, gold: '42', pred: '43', equal: false },
    { id: 4, gold: '\\frac{1}{2}', pred: '\\frac{1}{2}', equal: true },
  ]);
  assert.match(r.stderr, /in\.jsonl:3: expected \{"id", "gold": string, "pred": string\}/);
  rmSync(r.dir, { recursive: true, force: true });
});
