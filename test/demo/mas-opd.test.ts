// `marft demo mas-opd`: argument handling (fast) and, as a long test, the whole study on tiny
// budgets (its numbers mean nothing; the test checks the pipeline and the final JSON line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/commands/demo.ts';
import { UserError } from '../../src/cli/errors.ts';

async function captured(args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (s: string) => lines.push(s);
  try {
    return { code: await run(args), lines };
  } finally {
    console.log = original;
  }
}

test('marft demo --help lists both demos; marft demo mas-opd --help describes the study', async () => {
  const main = await captured(['--help']);
  assert.equal(main.code, 0);
  assert.match(main.lines.join('\n'), /usage: marft demo \[--run-dir DIR\]/);
  assert.match(main.lines.join('\n'), /mas-opd {5}MAS-OPD: students distilled from a teacher built here/);
  const opd = await captured(['mas-opd', '--help']);
  assert.equal(opd.code, 0);
  assert.match(opd.lines.join('\n'), /^usage: marft demo mas-opd \[--run-dir DIR\] \[--seed N\] \[--quick\] \[--ablation \| --no-ablation\]/);
});

test('marft demo mas-opd rejects bad arguments with one-line user errors', async () => {
  await assert.rejects(run(['mas-opd', '--seed', '-2']), (e: unknown) => e instanceof UserError && /non-negative integer/.test(e.message));
  await assert.rejects(run(['mas-opd', '--ablation', '--no-ablation']), (e: unknown) => e instanceof UserError && /exclude each other/.test(e.message));
  await assert.rejects(run(['mas-opd', 'extra']), (e: unknown) => e instanceof UserError && /unexpected argument 'extra'/.test(e.message));
  for (const bad of ['full', 'full:-1', 'full:1.5', 'nope:0', 'full:0,', 'no-ras:0:1']) {
    await assert.rejects(run(['mas-opd', '--runs', bad]), (e: unknown) => e instanceof UserError && /--runs: .* is not VARIANT:SEED/.test(e.message), bad);
  }
  await assert.rejects(run(['mas-opd', '--runs', 'full:0', '--ablation']), (e: unknown) => e instanceof UserError && /exclude each other/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), 'marft-opd-cli-'));
  try {
    writeFileSync(join(dir, 'keep.txt'), 'earlier results');
    await assert.rejects(run(['mas-opd', '--run-dir', dir]), (e: unknown) => e instanceof UserError && /is not empty/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('marft demo mas-opd --quick runs the whole study and ends with the JSON line', { skip: process.env.MARFT_LONG_TESTS === '0' ? 'MARFT_LONG_TESTS=0' : false }, async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'marft-opd-quick-')), 'run');
  try {
    const { code, lines } = await captured(['mas-opd', '--quick', '--run-dir', dir]);
    assert.equal(code, 0);
    const last = JSON.parse(lines[lines.length - 1]!) as Record<string, number>;
    for (const key of ['before', 'after', 'teacher']) assert.ok(last[key]! >= 0 && last[key]! <= 1, `${key} ${last[key]}`);
    assert.equal(last.opdSteps, 2);
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { before: number };
    assert.equal(results.before, last.before);
    const metrics = readFileSync(join(dir, 'runs', 'mas-opd-seed0', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    assert.equal(metrics.length, 2);
    assert.ok(Number.isFinite(metrics[0]!.a_opd_reasoner) && Number.isFinite(metrics[0]!.a_role_tool_user));
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
});
