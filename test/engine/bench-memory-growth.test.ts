// bench/memory-growth.ts: a user mistake is one line and exit 2, before any model is loaded; on
// SmolLM2 (when imported) two short steps end with the JSON line its header promises. The memory it
// reports is measured by hand (docs/performance.md), never asserted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../python-oracle.ts';
import { skipWithoutSmollm2, smollm2Dir } from './smollm2-helpers.ts';

const bench = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/memory-growth.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 600_000 });

test('memory-growth: no --model, a folder that is not a model, a bad count or range: one line, exit 2', () => {
  for (const [args, message] of [
    [[], /--model DIR is required/],
    [['--model', '/nonexistent/model'], /is not a model folder \(no config\.json\)/],
    [['--model', smollm2Dir, '--steps', '0'], /--steps needs a positive integer, got "0"/],
    [['--model', smollm2Dir, '--min-length', '50', '--max-length', '20'], /--max-length must be at least --min-length/],
  ] as const) {
    const r = bench([...args]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('memory-growth on SmolLM2: 2 steps of 4 short sequences end with the JSON line, one entry per step', { skip: skipWithoutSmollm2, timeout: 600_000 }, () => {
  const r = bench(['--model', smollm2Dir, '--steps', '2', '--min-length', '8', '--max-length', '24']);
  assert.equal(r.status, 0, r.stderr);
  const last = JSON.parse(r.stdout.trim().split('\n').pop()!) as { model: string; steps: number; tokens: number[]; rss_mb: number[]; peak_rss_mb: number[]; pooled_free_mb: number[] };
  assert.equal(last.model, 'smollm2-135m-instruct');
  assert.equal(last.steps, 2);
  for (const key of ['tokens', 'rss_mb', 'peak_rss_mb', 'pooled_free_mb'] as const) assert.equal(last[key].length, 2, key);
  for (const t of last.tokens) assert.ok(t >= 4 * 8 && t <= 4 * 24, `tokens per step within 4 x the length range, got ${t}`);
  assert.ok(last.rss_mb.every((m) => m > 300), r.stdout);
});
