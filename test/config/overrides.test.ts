// `--set KEY=VALUE`: dotted keys, YAML values, checked where they land (errors name the --set), applied in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyOverrides, parseOverride } from '../../src/config/overrides.ts';
import { loadConfig, parseConfig } from '../../src/config/load.ts';

const apply = (raw: unknown, ...sets: string[]) => applyOverrides(raw, sets.map(parseOverride));

test('values are YAML: numbers, booleans, names, flow sequences and mappings', () => {
  assert.deepEqual(parseOverride('actor.optim.lr=3e-4'), { text: 'actor.optim.lr=3e-4', path: ['actor', 'optim', 'lr'], value: 3e-4 });
  assert.equal(parseOverride('algorithm=ippo').value, 'ippo');
  assert.equal(parseOverride('advantage.normaliseRewards=false').value, false);
  assert.deepEqual(parseOverride('policy.targetModules=[q_proj,v_proj]').value, ['q_proj', 'v_proj']);
  assert.deepEqual(parseOverride('critic.mlpHidden=[64, 32]').value, [64, 32]);
  assert.deepEqual(parseOverride('task.options={symbols: 4, dependency: true}').value, { symbols: 4, dependency: true });
  // Below a free-form mapping the value is YAML too (the task validates it).
  assert.equal(parseOverride('task.options.dataset=gsm8k').value, 'gsm8k');
  assert.equal(parseOverride('task.options.symbols=4').value, 4);
  // A string key takes the text as written (a folder named 123 stays a string); `KEY=` is the empty string.
  assert.equal(parseOverride('model.path=123').value, '123');
  assert.equal(parseOverride('model.path=/models/a=b #1').value, '/models/a=b #1');
  assert.equal(parseOverride('model.path=').value, '');
});

test('overrides change only their key, create missing mappings, apply in order and leave the input alone', () => {
  const raw = { task: { name: 'bandit' }, actor: { clipLow: 0.1, optim: { lr: 1e-5 } } };
  const out = apply(raw, 'actor.optim.lr=3e-4', 'rollout.batchSize=8', 'rollout.batchSize=16', 'task.options.dataset=gsm8k') as Record<string, any>;
  assert.deepEqual(out, { task: { name: 'bandit', options: { dataset: 'gsm8k' } }, actor: { clipLow: 0.1, optim: { lr: 3e-4 } }, rollout: { batchSize: 16 } });
  assert.deepEqual(raw, { task: { name: 'bandit' }, actor: { clipLow: 0.1, optim: { lr: 1e-5 } } });
  // A mapping value replaces the file's mapping, as `KEY: VALUE` in the file would.
  assert.deepEqual((apply(raw, 'actor.optim={eps: 1e-6}') as Record<string, any>).actor.optim, { eps: 1e-6 });
  // An empty file (null) takes overrides; no overrides leave the input as it was.
  assert.deepEqual(apply(null, 'task.name=bandit'), { task: { name: 'bandit' } });
  assert.equal(apply(raw), raw);
  const config = parseConfig(apply(raw, 'algorithm=ippo', 'policy.targetModules=[q_proj,v_proj]'));
  assert.equal(config.algorithm, 'ippo');
  assert.deepEqual(config.policy.targetModules, ['q_proj', 'v_proj']);
  assert.equal(config.actor.clipLow, 0.1);
});

test('mistakes are one line naming the --set: unknown keys, bad values, non-finite numbers, malformed text', () => {
  const cases: [string, RegExp][] = [
    ['algoritm=ippo', /^--set algoritm=ippo: algoritm: unknown key; allowed keys: seed, algorithm, task,/],
    ['actor.optim.lrr=1', /^--set actor\.optim\.lrr=1: actor\.optim\.lrr: unknown key; allowed keys of actor\.optim: lr, /],
    ['actor.optim.lr=.nan', /^--set actor\.optim\.lr=\.nan: actor\.optim\.lr: got NaN, expected a finite number >= 0$/],
    ['rollout.temperature=.inf', /got Infinity, expected a finite number >= 0$/],
    ['rollout.batchSize=1e9', /^--set rollout\.batchSize=1e9: rollout\.batchSize: got 1000000000, expected an integer in \[1, 65536\] \(the episodes of one step are held in memory together\)$/],
    ['algorithm=ppo', /^--set algorithm=ppo: algorithm: got "ppo", expected one of 'marft-action'/],
    ['policy.targetModules=[q_proj,lm_head]', /policy\.targetModules: got \["q_proj","lm_head"\], expected a list of 'q_proj'/],
    ['seed.x=1', /^--set seed\.x=1: seed is not a mapping \(it holds an integer in \[0, 4294967295\]\)$/],
    ['actor.optim.lr', /^--set actor\.optim\.lr: expected KEY=VALUE with a dotted KEY/],
    ['=3', /^--set =3: expected KEY=VALUE/],
    ['actor..lr=3', /^--set actor\.\.lr=3: the key 'actor\.\.lr' has an empty part$/],
    ['critic.mlpHidden=[64,', /^--set critic\.mlpHidden=\[64,: the value is not valid YAML: /],
    ['train.steps=', /^--set train\.steps=: train\.steps: got "", expected an integer/],
  ];
  for (const [text, re] of cases) {
    assert.throws(() => parseOverride(text), (e: Error) => e.name === 'ConfigError' && !e.message.includes('\n') && re.test(e.message), text);
  }
  // A file whose key holds a scalar where the override needs a mapping.
  assert.throws(() => apply({ task: 'bandit' }, 'task.name=bandit'), /^ConfigError: --set task\.name=bandit: task holds "bandit" in the configuration, not a mapping$/);
});

test('loadConfig applies --set before validation; a cross-key error after --set says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-overrides-'));
  const file = join(dir, 'run.yaml');
  writeFileSync(file, 'task: { name: coordination-game, options: { symbols: 3 } }\nrollout: { batchSize: 1024 }\n');
  const c = await loadConfig(file, ['actor.optim.lr=3e-4', 'task.options.symbols=4', 'train.steps=7']);
  assert.equal(c.actor.optim.lr, 3e-4);
  assert.deepEqual(c.task.options, { symbols: 4 });
  assert.equal(c.train.steps, 7);
  await assert.rejects(loadConfig(file, ['rollout.rolloutsPerPrompt=128']), /run\.yaml \(with --set\): rollout: batchSize × rolloutsPerPrompt = 1024 × 128 episodes per step, expected at most 65536/);
  // An override's own error comes before the file is read.
  await assert.rejects(loadConfig(join(dir, 'missing.yaml'), ['algoritm=ippo']), /^ConfigError: --set algoritm=ippo: algoritm: unknown key/);
});
