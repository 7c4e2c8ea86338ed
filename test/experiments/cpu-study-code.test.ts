// The code CPU study (examples/experiments/cpu-study-code.yaml, docs/experiments.md "The code CPU
// study"): its rows are the methods and systems they name on one training configuration, and its
// quick grid runs end to end through `marft experiment --quick` (CI's run of it: every method, CURE
// on the pair at horizon 1 included, trained and scored under two seeds).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadFor, readExperimentFile, trainingSets } from '../../src/experiments/experiment-file.ts';
import { checkQuickGrid } from './quick-grid.ts';

const FILE = fileURLToPath(new URL('../../examples/experiments/cpu-study-code.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-cpu-study-code-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Row → [algorithm (null: prompt-only), workflow, horizon]. */
const EXPECTED: Record<string, [string | null, string, number]> = {
  'SA+ST': [null, 'sa-st', 4],
  'SA+MT': [null, 'sa-mt', 4],
  MAS: [null, 'coder-tester', 4],
  'MAS-T1': [null, 'coder-tester', 1],
  'SA+ST+GRPO': ['grpo', 'sa-st', 4],
  'MAS+GRPO': ['grpo', 'coder-tester', 4],
  'MAS-T1+GRPO': ['grpo', 'coder-tester', 1],
  CURE: ['cure', 'coder-tester', 1],
  'AT-GRPO': ['at-grpo', 'coder-tester', 4],
  MAGRPO: ['magrpo', 'coder-tester', 4],
  IPPO: ['ippo', 'coder-tester', 4],
  MARFT: ['marft-action', 'coder-tester', 4],
};

test('the code study\'s rows: the method and system each names, one base, the same episodes per step', async () => {
  const exp = await readExperimentFile(FILE);
  assert.deepEqual(exp.rows.map((r) => r.name), Object.keys(EXPECTED));
  const shared = new Set<string>();
  for (const row of exp.rows) {
    const config = await loadFor(row.name, row.config, trainingSets(exp, row, row.seeds[0]!, []));
    const [algorithm, workflow, horizon] = EXPECTED[row.name]!;
    assert.equal(row.base, algorithm === null, row.name);
    if (algorithm) assert.equal(config.algorithm, algorithm, row.name);
    assert.equal(config.task.name, 'code-pair');
    assert.equal(config.task.options.workflow ?? 'coder-tester', workflow, row.name);
    assert.equal(config.task.options.horizon, horizon, row.name);
    assert.equal(config.rollout.batchSize * config.rollout.rolloutsPerPrompt, 32, `${row.name}: 32 episodes (or trees) per step`);
    assert.deepEqual([config.eval.temperature, config.eval.topP, config.eval.topK, config.eval.seeds], [0.6, 0.95, 20, 5], `${row.name}: the MAS-OPD paper's evaluation`);
    const { workflow: _w, horizon: _h, ...base } = config.task.options as Record<string, unknown>;
    shared.add(JSON.stringify([config.train.steps, config.actor.optim.lr, config.rollout.temperature, base]));
  }
  assert.equal(shared.size, 1, 'every row has the same steps, optimiser, sampling and base');
});

test('the code study\'s quick grid: every method trained under seeds 0 and 1 and scored', async () => {
  const rows = Object.fromEntries(Object.entries(EXPECTED).map(([name, [algorithm]]) => [name, { base: algorithm === null }]));
  await checkQuickGrid({ file: FILE, cwd: join(root, 'work'), column: 'code-pair-heldout', rows, cachedOnce: ['code-pair-student-'] });
});
