// The CLI guides (issue 21, item 7): did-you-mean for commands, options, configuration keys and
// values; --version; a syntax error keeps its code frame; a missing model folder is said as such and
// dataset names are checked before a tokenizer is opened; a checkpoint that does not fit the
// configuration is one line; `experiment --dry-run` checks the model folders and says what it counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { assertUserError, runCli, runInProcess } from './spawn-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'marft-guidance-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const tabular = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;

test('did you mean: a command, an option, a configuration key, a value, a task, a dataset', async () => {
  const run = join(dir, 'never');
  assertUserError(await runInProcess(['trian']), /^marft: unknown command 'trian'; did you mean 'train'\? Commands: dashboard, demo, eval, /, 'command');
  assertUserError(await runInProcess(['xyz']), /^marft: unknown command 'xyz'\. Commands: /, 'no near command: no guess');
  assertUserError(await runInProcess(['train', tabular, '--run-dri', run]), /^marft train: unknown option --run-dri; did you mean --run-dir\? \(known: /, 'option');
  assertUserError(await runInProcess(['eval', tabular, '--chekpoint', run]), /unknown option --chekpoint; did you mean --checkpoint\?/, 'eval option');
  assertUserError(await runInProcess(['train', file('key.yaml', 'task: { name: bandit }\ncritic: { kindd: mlp }\n'), '--run-dir', run]),
    /^marft train: .*key\.yaml: critic\.kindd: unknown key; allowed keys of critic: kind, .*; did you mean kind\?$/, 'key in a file');
  assertUserError(await runInProcess(['train', tabular, '--run-dir', run, '--set', 'rollout.batchSiz=4']), /rollout\.batchSiz: unknown key; .*; did you mean batchSize\?$/, 'key in --set');
  assertUserError(await runInProcess(['train', file('value.yaml', 'task: { name: bandit }\nalgorithm: marft-actoin\n'), '--run-dir', run]),
    /algorithm: got "marft-actoin", expected one of 'marft-action', .*; did you mean 'marft-action'\?$/, 'enum value');
  assertUserError(await runInProcess(['train', file('task.yaml', 'task: { name: coordination-gam }\nmodel: { engine: tabular }\n'), '--run-dir', run]),
    /task\.name: got "coordination-gam", expected one of .*; did you mean 'coordination-game'\?$/, 'task name');
  assertUserError(await runInProcess(['train', file('dataset.yaml', 'task: { name: workflow, options: { dataset: gsm8kk } }\n'), '--run-dir', run]),
    /task\.options\.dataset: got "gsm8kk", expected one of .*; did you mean 'gsm8k'\?$/, 'dataset');
});

test('--version prints package.json\'s version; --help lists every command', async () => {
  const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  const r = await runCli({ args: ['--version'] });
  assert.deepEqual([r.status, r.stdout, r.stderr], [0, `${version}\n`, '']);
  const help = await runInProcess(['--help']);
  assert.equal(help.status, 0);
  for (const name of ['demo', 'eval', 'experiment', 'logprobs', 'train', 'verify']) assert.match(help.stdout, new RegExp(`^  ${name} +\\S`, 'm'), name);
});

test('a YAML or JSON syntax error: one line with FILE:LINE:COL, then its code frame', async () => {
  const yaml = file('broken.yaml', 'task: { name: bandit }\nmodel:\n  engine: [tabular\nseed: 1\n');
  const r = await runInProcess(['train', yaml, '--run-dir', join(dir, 'never')]);
  assert.equal(r.status, 2);
  const [first, ...frame] = r.stderr.trimEnd().split('\n');
  assert.match(first!, /^marft train: .*broken\.yaml:4:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a \]$/);
  assert.match(frame.join('\n'), /^  2 \| model:\n  3 \|   engine: \[tabular\n> 4 \| seed: 1\n    \| \^$/);
  const json = await runInProcess(['train', file('broken.json', '{\n  "task": {"name": "bandit"},\n}\n'), '--run-dir', join(dir, 'never')]);
  assert.equal(json.status, 2);
  assert.match(json.stderr, /^marft train: .*broken\.json:3:1: not valid JSON: Expected double-quoted property name in JSON at position \d+\n  1 \| \{\n  2 \|   "task": \{"name": "bandit"\},\n> 3 \| \}\n    \| \^\n$/);
});

test('a missing model folder is said as such; a dataset name is checked before any tokenizer is opened', async () => {
  const run = join(dir, 'never');
  const missing = join(dir, 'no-model');
  assertUserError(await runInProcess(['train', file('m1.yaml', `task: { name: workflow, options: { dataset: gsm8kk } }\nmodel: { path: ${missing} }\n`), '--run-dir', run]),
    new RegExp(`^marft train: model\\.path: ${missing}: no such folder$`), 'missing model folder (the tokenizer would come from it)');
  assertUserError(await runInProcess(['train', file('m2.yaml', `task: { name: bandit }\nmodel: { path: ${join(dir, 'm1.yaml')} }\n`), '--run-dir', run]),
    /model\.path: .*m1\.yaml: is a file, not a model folder$/, 'a file');
  assertUserError(await runInProcess(['train', file('m3.yaml', `task: { name: workflow, options: { dataset: gsm8kk, tokenizer: ${missing} } }\n`), '--run-dir', run]),
    /^marft train: task\.options\.dataset: got "gsm8kk"/, 'the dataset before the tokenizer');
});

test('eval: a checkpoint that does not fit the configuration is one line', { timeout: 120_000 }, async () => {
  // A tiny coordination run on the embedded engine (the task builds its model, saved to RUN/base).
  const config = file('coord.yaml', 'task: { name: coordination-game, options: { symbols: 4, hiddenSize: 32 } }\nmodel: { engine: embedded }\npolicy: { loraRank: 4 }\ncritic: { kind: mlp, mlpHidden: [8] }\nrollout: { batchSize: 4, maxNewTokens: 1 }\ntrain: { steps: 1, checkpointEvery: 1 }\neval: { seeds: 1, problems: 4 }\n');
  const run = join(dir, 'coord-run');
  const trained = await runInProcess(['train', config, '--run-dir', run]);
  assert.equal(trained.status, 0, trained.stderr);
  assertUserError(await runInProcess(['eval', config, '--checkpoint', run, '--set', 'task.options.symbols=6']),
    /^marft eval: .*coord\.yaml does not fit the checkpoint .*step-000001: its task needs a vocabulary of 9 ids, the model has 7 /, 'another vocabulary');
  // The checkpoint alone, away from its run's base: the task builds a model of another width.
  const lone = join(dir, 'lone', 'a', 'b');
  mkdirSync(lone, { recursive: true });
  cpSync(join(run, 'checkpoints', 'step-000001'), join(lone, 'step-000001'), { recursive: true });
  assertUserError(await runInProcess(['eval', config, '--checkpoint', join(lone, 'step-000001'), '--set', 'task.options.hiddenSize=64']),
    /^marft eval: .*coord\.yaml does not fit the checkpoint .*step-000001: .*adapter_model\.safetensors: ".*lora_A\.weight" has shape \[4,64\], the model needs \[4, 128\]/, 'another width');
});

test('experiment --dry-run: missing model folders are refused; the counts say what they count', async () => {
  const exp = file('exp.yaml', `name: e\nrows:\n  - { name: untrained, config: ${tabular}, base: true }\n  - { name: marft, config: ${tabular} }\ncolumns:\n  - { name: c1 }\n  - { name: c2 }\nseeds: [0, 1]\n`);
  const out = join(dir, 'exp-out');
  assertUserError(await runInProcess(['experiment', exp, '--out', out, '--dry-run', '--set', `model.path=${join(dir, 'nowhere')}`]),
    /^marft experiment: row untrained × column c1: model\.path: .*nowhere: no such folder \(and 4 more configurations of this experiment naming a missing folder\); give the folder/, 'model folder');
  const teacher = file('opd.yaml', `name: o\nrows:\n  - { name: opd, config: ${new URL('../../examples/mas-opd-tiny.yaml', import.meta.url).pathname} }\ncolumns:\n  - { name: c }\n`);
  assertUserError(await runInProcess(['experiment', teacher, '--out', out, '--dry-run', '--set', `teacher.path=${join(dir, 'no-teacher')}`]),
    /^marft experiment: row opd: teacher\.path: .*no-teacher: no such folder; give the folder in the experiment file or with --set KEY=PATH$/, 'teacher folder');
  // A row's configuration that does not parse: the row's one line, then the code frame.
  const broken = file('exp-broken.yaml', `name: b\nrows:\n  - { name: r, config: ${file('row.yaml', 'task: { name: bandit\n')} }\ncolumns:\n  - { name: c }\n`);
  const frame = await runInProcess(['experiment', broken, '--out', out, '--dry-run']);
  assert.equal(frame.status, 2);
  assert.match(frame.stderr, /^marft experiment: row r: .*row\.yaml:2:1: not valid YAML: .*\n  1 \| task: \{ name: bandit\n> 2 \| \n    \| \^\n$/);
  const plan = await runInProcess(['experiment', exp, '--out', out, '--dry-run']);
  assert.equal(plan.status, 0, plan.stderr);
  const lines = plan.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^experiment e: 4 runs \(row × seed: 2 trained, 2 of base rows, which train nothing\), 8 evaluations \(run × column\), into /);
  assert.equal(lines[lines.length - 1], 'to do: 2 runs to train or resume, 8 evaluations (of 2 runs that train and 8 evaluations in the plan; the others are done)');
});
