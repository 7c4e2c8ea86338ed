// The CPU study (examples/experiments/cpu-study.yaml, docs/experiments.md "The CPU study"): its
// rows are the methods they name on one training configuration, and its quick grid runs end to
// end through `marft experiment --quick` (CI's run of the study: every method trained and scored
// under two seeds; about 1.5 minutes on 2 cores). Also the `quick` section's own rules.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadFor, quickExperiment, readExperimentFile, trainingSets } from '../../src/experiments/experiment-file.ts';
import { assertUserError, runCli, runInProcess } from '../cli/spawn-cli.ts';

const FILE = fileURLToPath(new URL('../../examples/experiments/cpu-study.yaml', import.meta.url));
const COORD = fileURLToPath(new URL('../../examples/coordination-embedded.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-cpu-study-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('the study\'s rows: one configuration, each row the algorithm it names, the same budget', async () => {
  const exp = await readExperimentFile(FILE);
  const expected: Record<string, string | null> = { Duo: null, 'Duo+GRPO': 'grpo', MAGRPO: 'magrpo', IPPO: 'ippo', MARFT: 'marft-action', 'MARFT-token': 'marft-token', 'MARFT-shared': 'marft-action', 'Duo-anonymous': null, 'MARFT-anonymous': 'marft-action' };
  assert.deepEqual(exp.rows.map((r) => r.name), Object.keys(expected));
  assert.equal(new Set(exp.rows.map((r) => r.config)).size, 1, 'every row starts from one configuration');
  const budgets = new Set<string>();
  for (const row of exp.rows) {
    const config = await loadFor(row.name, row.config, trainingSets(exp, row, row.seeds[0]!, []));
    if (row.base) assert.equal(expected[row.name], null);
    else assert.equal(config.algorithm, expected[row.name], row.name);
    assert.equal(config.policy.parameterSharing, row.name === 'MARFT-shared', `${row.name}: parameter sharing`);
    assert.equal(config.task.name, 'arith-duo');
    assert.equal(config.eval.temperature, 0.6);
    assert.equal(config.task.options.roles, row.name.endsWith('-anonymous') ? 'anonymous' : undefined, `${row.name}: role labels`);
    const { roles: _roles, ...taskOptions } = config.task.options;
    budgets.add(JSON.stringify([config.train.steps, config.rollout.batchSize, config.rollout.rolloutsPerPrompt, config.actor.optim.lr, taskOptions]));
  }
  assert.equal(budgets.size, 1, 'every row has the same budget, optimiser and base (but for its role labels)');
  assert.deepEqual(exp.seeds, [0, 1, 2, 3, 4]);
});

test('quick: the quick seeds except for a row with its own, the quick set after the row\'s, its own name', async () => {
  const exp = quickExperiment(await readExperimentFile(FILE));
  assert.equal(exp.name, 'cpu-study-quick');
  assert.deepEqual(exp.rows.map((r) => r.seeds), [[0], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0], [0, 1]]);
  const row = exp.rows.find((r) => r.name === 'MARFT')!;
  const sets = trainingSets(exp, row, 1, ['log.every=1']);
  assert.deepEqual(sets.slice(0, 1), ['algorithm=marft-action']);
  assert.ok(sets.indexOf('train.steps=4') > sets.indexOf('algorithm=marft-action'), 'the quick budget comes after the row\'s keys');
  assert.deepEqual(sets.slice(-2), ['log.every=1', 'seed=1'], 'the command line and the seed come last');
  const config = await loadFor(row.name, row.config, sets);
  assert.equal(config.train.steps, 4);
  // A row's own budget key loses to the quick one.
  const file = join(root, 'own-steps.yaml');
  writeFileSync(file, `name: e\nrows:\n  - { name: a, config: ${COORD}, set: { train.steps: 9 } }\ncolumns:\n  - { name: c }\nquick: { set: { train.steps: 2 } }\n`);
  const q = quickExperiment(await readExperimentFile(file));
  assert.equal((await loadFor('a', q.rows[0]!.config, trainingSets(q, q.rows[0]!, 0, []))).train.steps, 2);
  assert.deepEqual(q.rows[0]!.seeds, [0, 1, 2, 3, 4], 'without quick.seeds the file\'s seeds stay');
});

test('--quick on a file without a quick section, and a bad quick section, are one line', async () => {
  const none = join(root, 'no-quick.yaml');
  writeFileSync(none, `name: e\nrows:\n  - { name: a, config: ${COORD} }\ncolumns:\n  - { name: c }\n`);
  assertUserError(await runInProcess(['experiment', none, '--quick', '--out', join(root, 'o1')]), /no-quick\.yaml: --quick: this file has no quick section/, 'no section');
  const bad = join(root, 'bad-quick.yaml');
  writeFileSync(bad, `name: e\nrows:\n  - { name: a, config: ${COORD} }\ncolumns:\n  - { name: c }\nquick: { seed: [0] }\n`);
  assertUserError(await runInProcess(['experiment', bad, '--quick', '--out', join(root, 'o2')]), /quick\.seed: unknown key; allowed keys of quick: seeds, set$/, 'bad key');
  assert.equal(existsSync(join(root, 'o1')) || existsSync(join(root, 'o2')), false);
});

test('the quick grid: every method trained under seeds 0 and 1 and scored, results.json and the table written', async () => {
  // Its own working folder: the study caches its pretrained base in runs/cache, relative to it.
  const cwd = join(root, 'work');
  mkdirSync(cwd);
  const r = await runCli({ args: ['experiment', FILE, '--quick', '--out', 'quick'], cwd });
  assert.equal(r.status, 0, `exit ${r.status}; stderr: ${r.stderr.slice(-2000)}`);
  const out = join(cwd, 'quick');
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { methods: Record<string, { benchmarks: Record<string, { mean: number; std: number | null; seeds: number[] }> }> };
  assert.deepEqual(Object.keys(results.methods), ['Duo', 'Duo+GRPO', 'MAGRPO', 'IPPO', 'MARFT', 'MARFT-token', 'MARFT-shared', 'Duo-anonymous', 'MARFT-anonymous']);
  for (const [method, m] of Object.entries(results.methods)) {
    const cell = m.benchmarks['arith-heldout']!;
    assert.equal(cell.seeds.length, method === 'Duo' || method === 'Duo-anonymous' ? 1 : 2, method);
    for (const s of cell.seeds) assert.ok(s >= 0 && s <= 1, `${method}: a score in [0, 1], got ${s}`);
    assert.ok(Math.abs(cell.mean - cell.seeds.reduce((a, b) => a + b, 0) / cell.seeds.length) < 1e-12, `${method}: the mean of its seeds`);
  }
  // Each base (named roles, anonymous roles) was pretrained once and reused by every run of its rows.
  assert.equal(readdirSync(join(cwd, 'runs', 'cache')).filter((f) => f.startsWith('arith-duo-')).length, 2);
  assert.match(readFileSync(join(out, 'table.md'), 'utf8'), /^# cpu-study-quick\n/);
  assert.ok(existsSync(join(out, 'curves', 'arith-heldout.svg')));
});
