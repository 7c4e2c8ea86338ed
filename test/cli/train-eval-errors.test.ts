// `marft train` / `marft eval` on bad input (issue 12, item 5): every mistake is exit code 2 and one
// line on stderr without a stack trace, and nothing is trained or written. The commands run in this
// process (a long table of cases); test/cli/findings.test.ts spawns the CLI for the findings.
import { test } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.ts';
import { tinyModelConfig } from '../../src/tasks/tiny-model.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { assertUserError, runInProcess } from './spawn-cli.ts';

const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;

test('train and eval: bad configurations, paths and flags are one line each, exit code 2, and create no run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-cli-errors-'));
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const run = join(dir, 'run');
  // A model folder whose weights are missing (config.json only).
  const weightless = join(dir, 'weightless');
  await createEngine(tinyModelConfig(new CharTokenizer('0123456789'), { hiddenSize: 8, layers: 1, contextLength: 16 }), { seed: 1 }).saveBase(weightless);
  rmSync(join(weightless, 'model.safetensors'));
  const cases: [string, { args: string[] }, RegExp][] = [
    // Sizes that cannot fit in memory (a native crash, exit 133, before).
    ['batchSize 1e9', { args: ['train', file('big.yaml', 'task: { name: bandit }\nmodel: { engine: tabular }\nrollout: { batchSize: 1000000000 }\n'), '--run-dir', run] },
      /^marft train: .*big\.yaml: rollout\.batchSize: got 1000000000, expected an integer in \[1, 65536\] \(the episodes of one step are held in memory together\)$/],
    ['batchSize × rolloutsPerPrompt', { args: ['train', example, '--run-dir', run, '--set', 'rollout.batchSize=4096', '--set', 'rollout.rolloutsPerPrompt=64'] },
      /rollout: batchSize × rolloutsPerPrompt = 4096 × 64 episodes per step, expected at most 65536/],
    // Empty configurations (trained 100 steps of defaults, before).
    ['empty file', { args: ['train', file('empty.yaml', ''), '--run-dir', run] }, /empty\.yaml: the config is empty: it must name at least task\.name/],
    ['{}', { args: ['train', file('braces.json', '{}'), '--run-dir', run] }, /braces\.json: the config is empty: it must name at least task\.name/],
    ['comments only', { args: ['train', file('comments.yaml', '# a run\n# to be written\n'), '--run-dir', run] }, /comments\.yaml: the config is empty/],
    ['no task.name', { args: ['train', file('noname.yaml', 'algorithm: ippo\n'), '--run-dir', run] }, /noname\.yaml: task\.name is missing/],
    // Non-finite numbers (reported as "got null", before).
    ['YAML .nan', { args: ['train', file('nan.yaml', 'task: { name: bandit }\nactor: { optim: { lr: .nan } }\n'), '--run-dir', run] }, /nan\.yaml: actor\.optim\.lr: got NaN, expected a finite number >= 0$/],
    ['JSON 1e999', { args: ['train', file('inf.json', '{"task": {"name": "bandit"}, "seed": 1e999}'), '--run-dir', run] }, /inf\.json: seed: got Infinity, expected a finite integer/],
    ['--set .inf', { args: ['train', example, '--run-dir', run, '--set', 'actor.optim.lr=.inf'] }, /^marft train: --set actor\.optim\.lr=\.inf: actor\.optim\.lr: got Infinity, expected a finite number >= 0$/],
    ['--set task option .nan', { args: ['train', example, '--run-dir', join(dir, 'run-options'), '--set', 'task.options.symbols=.nan'] }, /task\.options\.symbols: got NaN, expected an integer/],
    ['--set unknown key', { args: ['train', example, '--run-dir', run, '--set', 'algoritm=ippo'] }, /^marft train: --set algoritm=ippo: algoritm: unknown key; allowed keys: seed, algorithm,/],
    ['--set without =', { args: ['train', example, '--run-dir', run, '--set', 'train.steps'] }, /--set train\.steps: expected KEY=VALUE/],
    ['--set at the end', { args: ['train', example, '--run-dir', run, '--set'] }, /^marft train: --set needs a value$/],
    // A flag where a value belongs (trained into a folder named "--no-progress", before).
    ['--run-dir --no-progress', { args: ['train', example, '--run-dir', '--no-progress'] }, /^marft train: --run-dir needs a value, got the flag --no-progress/],
    ['--run-dir twice', { args: ['train', example, '--run-dir', run, '--run-dir', join(dir, 'other')] }, /--run-dir is given twice/],
    ['model.path without weights', { args: ['train', file('weightless.yaml', `task: { name: coordination-game }\nmodel: { path: ${JSON.stringify(weightless)} }\n`), '--run-dir', join(dir, 'run-weightless')] },
      /^marft train: model\.path: .*weightless: no model\.safetensors or model\.safetensors\.index\.json/],
    ['config is a folder', { args: ['train', dir, '--run-dir', run] }, /: is a folder, not a configuration file$/],
    ['config missing', { args: ['train', join(dir, 'nope.yaml'), '--run-dir', run] }, /nope\.yaml: no such file$/],
    ['--run-dir is a file', { args: ['train', example, '--run-dir', join(dir, 'empty.yaml')] }, /--run-dir .*empty\.yaml: is a file, not a folder$/],
    ['--accept-config-change on a fresh run', { args: ['train', example, '--run-dir', run, '--accept-config-change'] }, /--accept-config-change goes with --resume DIR/],
    ['--resume a missing folder', { args: ['train', '--resume', join(dir, 'nowhere')] }, /--resume .*nowhere: no such folder$/],
    ['--resume a folder without config.json', { args: ['train', '--resume', join(dir, 'plain')] }, /plain is not a run folder \(no config\.json\)$/],
    ['--resume with a CONFIG', { args: ['train', example, '--resume', join(dir, 'plain')] }, /--resume takes the run folder only/],
    ['eval: --checkpoint missing', { args: ['eval', example, '--checkpoint', join(dir, 'nowhere')] }, /^marft eval: --checkpoint .*nowhere: no such folder$/],
    ['eval: --checkpoint --base', { args: ['eval', example, '--checkpoint', '--base'] }, /^marft eval: --checkpoint needs a value, got the flag --base/],
    ['eval: empty config', { args: ['eval', join(dir, 'empty.yaml'), '--checkpoint', dir] }, /^marft eval: .*empty\.yaml: the config is empty/],
    ['eval: --set bad value', { args: ['eval', example, '--checkpoint', dir, '--set', 'eval.seeds=0'] }, /^marft eval: --set eval\.seeds=0: eval\.seeds: got 0, expected an integer in \[1, 1000\]$/],
  ];
  mkdirSync(join(dir, 'plain'));
  for (const [what, { args }, message] of cases) assertUserError(await runInProcess(args), message, what);
  // Nothing was trained: no run folder.
  assert.ok(!existsSync(run), 'a run folder was created');
});
