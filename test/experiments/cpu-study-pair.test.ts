// The pair CPU study (examples/experiments/cpu-study-pair.yaml, docs/experiments.md "The pair CPU
// study"): its rows are the methods and systems they name on one training configuration, and its
// quick grid runs end to end through `marft experiment --quick` (CI's run of it: every method,
// MAS-OPD with the teacher the task builds included, trained and scored under two seeds).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadFor, readExperimentFile, trainingSets } from '../../src/experiments/experiment-file.ts';
import { checkQuickGrid } from './quick-grid.ts';

const FILE = fileURLToPath(new URL('../../examples/experiments/cpu-study-pair.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-cpu-study-pair-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Row → [algorithm (null: prompt-only), workflow, agents per role, parameter sharing]. */
const EXPECTED: Record<string, [string | null, string, number, boolean]> = {
  'SA+ST': [null, 'sa-st', 1, false],
  'SA+MT': [null, 'sa-mt', 1, false],
  MAS: [null, 'reasoner-tooluser', 1, false],
  'MAS-4': [null, 'reasoner-tooluser', 2, false],
  'SA+ST+GRPO': ['grpo', 'sa-st', 1, false],
  'SA+MT+GRPO': ['grpo', 'sa-mt', 1, false],
  'MAS+GRPO': ['grpo', 'reasoner-tooluser', 1, false],
  'AT-GRPO': ['at-grpo', 'reasoner-tooluser', 1, false],
  MAGRPO: ['magrpo', 'reasoner-tooluser', 1, false],
  IPPO: ['ippo', 'reasoner-tooluser', 1, false],
  MARFT: ['marft-action', 'reasoner-tooluser', 1, false],
  'MARFT-shared': ['marft-action', 'reasoner-tooluser', 1, true],
  'MARFT-4': ['marft-action', 'reasoner-tooluser', 2, false],
  'MAS-OPD': ['mas-opd', 'reasoner-tooluser', 1, false],
  'MAS-OPD-4': ['mas-opd', 'reasoner-tooluser', 2, false],
};

test('the pair study\'s rows: the method and system each names, one base, the same episodes per step', async () => {
  const exp = await readExperimentFile(FILE);
  assert.deepEqual(exp.rows.map((r) => r.name), Object.keys(EXPECTED));
  const shared = new Set<string>();
  for (const row of exp.rows) {
    const config = await loadFor(row.name, row.config, trainingSets(exp, row, row.seeds[0]!, []));
    const [algorithm, workflow, perRole, sharing] = EXPECTED[row.name]!;
    assert.equal(row.base, algorithm === null, row.name);
    if (algorithm) assert.equal(config.algorithm, algorithm, row.name);
    assert.equal(config.task.name, 'arith-pair');
    assert.equal(config.task.options.workflow, workflow, row.name);
    assert.equal(config.task.options.agentsPerRole ?? 1, perRole, row.name);
    assert.equal(config.policy.parameterSharing, sharing, row.name);
    assert.equal(config.rollout.batchSize * config.rollout.rolloutsPerPrompt, 32, `${row.name}: 32 episodes (or trees) per step`);
    assert.deepEqual([config.eval.temperature, config.eval.topP, config.eval.topK, config.eval.seeds], [0.6, 0.95, 20, 5], `${row.name}: the MAS-OPD paper's evaluation`);
    const { workflow: _w, agentsPerRole: _a, ...base } = config.task.options as Record<string, unknown>;
    shared.add(JSON.stringify([config.train.steps, config.actor.optim.lr, config.rollout.temperature, base]));
  }
  assert.equal(shared.size, 1, 'every row has the same steps, optimiser, sampling and base');
});

test('the pair study\'s quick grid: every method trained under seeds 0 and 1 and scored', async () => {
  const rows = Object.fromEntries(Object.entries(EXPECTED).map(([name, [algorithm]]) => [name, { base: algorithm === null }]));
  await checkQuickGrid({ file: FILE, cwd: join(root, 'work'), column: 'arith-pair-heldout', rows, cachedOnce: ['arith-pair-student-', 'arith-pair-teacher-'] });
});
