// The papers' experiment files (examples/experiments/) need real model folders, so CI cannot run
// them; here each is read and validated whole (every row's training configuration under every seed,
// every row × column evaluation configuration, the tasks' options and benchmarks) with placeholder
// model paths, and the MAS-OPD table is checked to hold the paper's rows and the shipped maths benchmarks.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DATASETS } from '../../src/env/datasets/index.ts';
import { evaluationSets, loadFor, readExperimentFile, trainingSets, validateExperiment } from '../../src/experiments/experiment-file.ts';
import { planExperiment } from '../../src/experiments/runner.ts';

const DIR = fileURLToPath(new URL('../../examples/experiments/', import.meta.url));
const SETS = ['model.path=/placeholder/student', 'teacher.path=/placeholder/teacher'];
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

test('examples/experiments holds the three CPU studies, the MAS-OPD main table and a MARFT table', () => {
  assert.deepEqual(files, ['cpu-study-code.yaml', 'cpu-study-pair.yaml', 'cpu-study.yaml', 'marft-teams.yaml', 'mas-opd-main-table.yaml']);
});

for (const f of files) {
  test(`${f}: every row × seed and row × column configuration loads`, async () => {
    const exp = await readExperimentFile(join(DIR, f));
    await validateExperiment(exp, SETS);
    // Every run under its own seed, as the experiment would train it (nothing exists under this --out).
    const plan = await planExperiment(exp, { out: join(tmpdir(), `marft-no-such-experiment-${process.pid}`), rows: exp.rows, sets: SETS });
    assert.equal(plan.length, exp.rows.reduce((s, r) => s + r.seeds.length, 0));
    for (const run of plan) {
      if (run.training) assert.equal(run.training.config.seed, run.seed);
      assert.equal(run.evals.length, exp.columns.length);
    }
  });
}

test('the MAS-OPD table: the paper\'s rows, each the algorithm and system it names, on the shipped maths benchmarks', async () => {
  const exp = await readExperimentFile(join(DIR, 'mas-opd-main-table.yaml'));
  const expected: Record<string, [string | null, string]> = {
    'SA+ST': [null, 'sa-st'], 'SA+MT': [null, 'sa-mt'], MAS: [null, 'reasoner-tooluser'],
    'SA+ST+GRPO': ['grpo', 'sa-st'], 'SA+MT+GRPO': ['grpo', 'sa-mt'], 'MAS+GRPO': ['grpo', 'reasoner-tooluser'],
    MAGRPO: ['magrpo', 'reasoner-tooluser'], 'AT-GRPO': ['at-grpo', 'reasoner-tooluser'],
    MARFT: ['marft-action', 'reasoner-tooluser'], 'MAS-OPD': ['mas-opd', 'reasoner-tooluser'],
  };
  assert.deepEqual(exp.rows.map((r) => r.name), Object.keys(expected));
  for (const row of exp.rows) {
    const [algorithm, workflow] = expected[row.name]!;
    assert.equal(row.base, algorithm === null, `${row.name}: base`);
    const config = await loadFor(row.name, row.config, trainingSets(exp, row, row.seeds[0]!, SETS));
    if (algorithm) assert.equal(config.algorithm, algorithm, row.name);
    const options = config.task.options as Record<string, unknown>;
    assert.equal(options.workflow, workflow, row.name);
    if (!row.base) assert.deepEqual(row.seeds, [0, 1, 2, 3, 4], `${row.name}: five training seeds`);
    for (const column of exp.columns) {
      const evalConfig = await loadFor(row.name, row.config, evaluationSets(exp, row, column, row.seeds[0]!, SETS));
      assert.deepEqual([evalConfig.eval.protocol, evalConfig.eval.temperature, evalConfig.eval.topP, evalConfig.eval.topK, evalConfig.eval.seeds], ['mas-opd', 0.6, 0.95, 20, 5], `${row.name} × ${column.name}: the paper's decoding`);
    }
  }
  const shippedMaths = Object.entries(DATASETS).filter(([name, d]) => d.domain === 'math' && d.bundledFile && !['gsm8k-train', 'gsm8k-socratic', 'aime2024-qwen'].includes(name)).map(([name]) => name).sort();
  assert.deepEqual(exp.columns.map((c) => c.set['task.options.heldOutDataset']).sort(), shippedMaths);
});

test('the MARFT table: every row × column is evaluated under the marft protocol (5 seeds at temperature 0.6)', async () => {
  const exp = await readExperimentFile(join(DIR, 'marft-teams.yaml'));
  for (const row of exp.rows) {
    for (const column of exp.columns) {
      const c = await loadFor(row.name, row.config, evaluationSets(exp, row, column, row.seeds[0]!, SETS));
      assert.deepEqual([c.eval.protocol, c.eval.temperature, c.eval.topP, c.eval.topK, c.eval.seeds], ['marft', 0.6, 1, 0, 5], `${row.name} × ${column.name}`);
    }
  }
});
