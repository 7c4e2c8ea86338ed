// `marft demo` argument handling (fast: nothing is trained).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/cli/commands/demo.ts';
import { UserError } from '../../src/cli/errors.ts';

test('marft demo --help prints the usage and exits 0', async () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (s: string) => lines.push(s);
  try {
    assert.equal(await run(['--help']), 0);
  } finally {
    console.log = original;
  }
  assert.match(lines.join('\n'), /usage: marft demo \[--run-dir DIR\] \[--seed N\] \[--quick\]/);
});

test('marft demo rejects bad arguments with one-line user errors', async () => {
  await assert.rejects(run(['--seed', 'abc']), (e: unknown) => e instanceof UserError && /--seed must be a number/.test(e.message));
  await assert.rejects(run(['--seed', '-1']), (e: unknown) => e instanceof UserError && /non-negative integer/.test(e.message));
  await assert.rejects(run(['--ablation', '--no-ablation']), (e: unknown) => e instanceof UserError && /exclude each other/.test(e.message));
  await assert.rejects(run(['extra']), (e: unknown) => e instanceof UserError && /unexpected argument 'extra'/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), 'marft-demo-cli-'));
  try {
    writeFileSync(join(dir, 'keep.txt'), 'earlier results');
    await assert.rejects(run(['--run-dir', dir]), (e: unknown) => e instanceof UserError && /is not empty/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
