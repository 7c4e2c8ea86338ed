// The check both study tasks' quick grids share (test/experiments/cpu-study-{pair,code}.test.ts):
// `marft experiment FILE --quick` in a working folder of its own ends with every row scored under
// its seeds (a prompt-only row once, a trained one twice), scores in [0, 1], each pretrained model
// built once into runs/cache and reused, and the column's curves written.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../cli/spawn-cli.ts';

export interface QuickGrid {
  file: string;
  /** An empty folder to run in: the tasks cache their pretrained models in runs/cache, relative to it. */
  cwd: string;
  column: string;
  /** Row names in the file's order, and whether each is prompt-only. */
  rows: Record<string, { base: boolean }>;
  /** Prefixes of the cache folders that must each appear once (one model pretrained, reused by every run). */
  cachedOnce: string[];
}

export async function checkQuickGrid(grid: QuickGrid): Promise<void> {
  mkdirSync(grid.cwd, { recursive: true });
  const r = await runCli({ args: ['experiment', grid.file, '--quick', '--out', 'quick'], cwd: grid.cwd });
  assert.equal(r.status, 0, `exit ${r.status}; stderr: ${r.stderr.slice(-2000)}`);
  const results = JSON.parse(readFileSync(join(grid.cwd, 'quick', 'results.json'), 'utf8')) as { methods: Record<string, { benchmarks: Record<string, { mean: number; seeds: number[] }> }> };
  assert.deepEqual(Object.keys(results.methods), Object.keys(grid.rows));
  for (const [method, m] of Object.entries(results.methods)) {
    const cell = m.benchmarks[grid.column]!;
    assert.equal(cell.seeds.length, grid.rows[method]!.base ? 1 : 2, method);
    for (const s of cell.seeds) assert.ok(s >= 0 && s <= 1, `${method}: a score in [0, 1], got ${s}`);
  }
  const cached = readdirSync(join(grid.cwd, 'runs', 'cache'));
  for (const prefix of grid.cachedOnce) assert.equal(cached.filter((f) => f.startsWith(prefix)).length, 1, `${prefix}: ${cached.join(', ')}`);
  assert.ok(existsSync(join(grid.cwd, 'quick', 'curves', `${grid.column}.svg`)));
}
