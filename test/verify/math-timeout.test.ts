// The per-line time limit of maths judging: a line that runs over it is written with "equal": null
// and "error": "timeout", and the lines after it are still judged (on a fresh judging thread).
// The slow line is a list of 50,000 numbers against the same list reversed: set matching compares
// about a billion pairs, which no machine does within the one-second limit used here.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TimedMathJudge } from '../../src/verify/math/timed-judge.ts';

const items = Array.from({ length: 50_000 }, (_, i) => String(i));
const SLOW = { gold: items.join(', '), pred: [...items].reverse().join(', ') };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('TimedMathJudge: verdicts as mathAnswersEqual, a timeout, then verdicts again from a fresh thread', async () => {
  const judge = new TimedMathJudge(1000);
  try {
    assert.deepEqual(await judge.judge('\\frac{1}{2}', '0.5'), { equal: true });
    assert.deepEqual(await judge.judge('42', 'The answer is 43.'), { equal: false });
    assert.deepEqual(await judge.judge(SLOW.gold, SLOW.pred), { equal: null, error: 'timeout' });
    assert.deepEqual(await judge.judge('(1, 2]', '(1, 2]'), { equal: true });
  } finally {
    await judge.close();
  }
  assert.throws(() => new TimedMathJudge(0), /time limit must be positive/);
});

test('marft verify math --timeout: the slow line is undecided, the others are judged, exit status 1', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-verify-math-'));
  dirs.push(dir);
  const input = join(dir, 'in.jsonl');
  const rows = [{ id: 1, gold: '42', pred: '42' }, { id: 2, ...SLOW }, { id: 3, gold: '1', pred: '2' }, { id: 4, gold: '\\frac{1}{2}', pred: '0.5' }];
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const r = spawnSync(process.execPath, [resolve('bin/marft.mjs'), 'verify', 'math', '--input', input, '--timeout', '1'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 1, r.stderr);
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(out.map((o) => [o['id'], o['equal'], o['error']]), [[1, true, undefined], [2, null, 'timeout'], [3, false, undefined], [4, true, undefined]]);
  assert.deepEqual(out[1], { ...rows[1], equal: null, error: 'timeout' }, 'the undecided line keeps its fields');
  assert.match(r.stderr, /in\.jsonl:2: not judged within the 1 s limit \(--timeout\); written with "equal": null/);
  assert.match(r.stderr, /1 line\(s\) undecided/);
  const bad = spawnSync(process.execPath, [resolve('bin/marft.mjs'), 'verify', 'math', '--input', input, '--timeout', '0'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1, 'a usage error is one line');
});
