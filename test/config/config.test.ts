// Configuration: App. B defaults, errors naming the dotted key and the allowed values, YAML/JSON files, docs in sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import { configReference } from '../../src/config/docs.ts';
import { configSchema } from '../../src/config/schema.ts';
import { ConfigError, docRows, type SchemaNode } from '../../src/config/schema-dsl.ts';

test('defaults are the App. B settings', () => {
  const c = parseConfig({});
  assert.equal(c.algorithm, 'marft-action');
  assert.deepEqual(c.actor.optim, { lr: 5e-6, weightDecay: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, maxGradNorm: 1, schedule: 'cosine', warmupRatio: 0.001, finalRatio: 0.05 });
  assert.equal(c.critic.optim.schedule, 'constant');
  assert.equal(c.critic.optim.warmupRatio, 0.001);
  assert.equal(c.actor.clipLow, 0.2);
  assert.equal(c.actor.klCoef, 0.1);
  assert.equal(c.actor.behaviourCap, 5);
  assert.equal(c.actor.decoupled, true);
  assert.equal(c.actor.recomputeLogprobs, true);
  assert.equal(c.advantage.gamma, 0.99);
  assert.equal(c.advantage.lambda, 0.95);
  assert.equal(c.advantage.gammaAgent, 1);
  assert.equal(c.advantage.gammaToken, 1);
  assert.equal(c.advantage.normaliseRewards, true);
  assert.equal(c.train.microBatchTokens, 32768);
  assert.equal(c.rollout.temperature, 1);
  assert.equal(c.rollout.rolloutsPerPrompt, 1);
  assert.equal(c.policy.loraRank, 32);
  assert.equal(c.policy.loraAlpha, 16);
  assert.equal(c.policy.targetModules.length, 7);
  assert.equal(c.eval.temperature, 0.6);
  assert.equal(c.eval.seeds, 5);
});

test('errors name the dotted key and the allowed values', () => {
  assert.throws(() => parseConfig({ actor: { actionNormalisation: 'words' } }), /actor\.actionNormalisation: got "words", expected one of 'sum', 'token', 'word'/);
  assert.throws(() => parseConfig({ advantage: { gamma: 1.5 } }), /advantage\.gamma: got 1\.5, expected a number in \[0, 1\]$/);
  assert.throws(() => parseConfig({ actor: { optim: { lr: 'fast' } } }), /actor\.optim\.lr: got "fast", expected a number >= 0/);
  assert.throws(() => parseConfig({ train: { steps: 2.5 } }), /train\.steps: got 2\.5, expected an integer in \[1, 1000000\]$/);
  assert.throws(() => parseConfig({ critic: { kindd: 'mlp' } }), /critic\.kindd: unknown key; allowed keys of critic: kind, mlpHidden/);
  assert.throws(() => parseConfig({ algoritm: 'ippo' }), /algoritm: unknown key; allowed keys: seed, algorithm/);
  assert.throws(() => parseConfig({ policy: { targetModules: ['q_proj', 'lm_head'] } }), /policy\.targetModules: .*expected a list of 'q_proj'/);
  assert.throws(() => parseConfig({ critic: { mlpHidden: [64, -1] } }), /critic\.mlpHidden: got \[64,-1\], expected a list of integers in \[1, 65536\]$/);
});

test('YAML and JSON files load; a bad file names itself and the key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-'));
  writeFileSync(join(dir, 'a.yaml'), 'algorithm: ippo\ntask: { name: bandit }\nadvantage:\n  gammaAgent: 0.99\n');
  const a = await loadConfig(join(dir, 'a.yaml'));
  assert.equal(a.algorithm, 'ippo');
  assert.equal(a.advantage.gammaAgent, 0.99);
  writeFileSync(join(dir, 'b.json'), JSON.stringify({ rollout: { batchSize: 0 } }));
  await assert.rejects(loadConfig(join(dir, 'b.json')), /b\.json: rollout\.batchSize: got 0, expected an integer in \[1, 65536\]/);
  writeFileSync(join(dir, 'c.yaml'), 'a: [1,\n');
  await assert.rejects(loadConfig(join(dir, 'c.yaml')), (e: ConfigError) => /c\.yaml:2:1: not valid YAML: /.test(e.message) && e.frame === '  1 | a: [1,\n> 2 | \n    | ^' || assert.fail(`${e.message}\n${e.frame}`));
});

test('docs/config.md is generated from the schema and up to date', () => {
  assert.equal(readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8'), configReference());
});

test('every example config validates', async () => {
  const dir = new URL('../../examples/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.length >= 3, `examples: ${files.join(', ')}`);
  for (const f of files) await loadConfig(join(dir.pathname, f));
  // The real model's examples (examples/real/, docs/real-models.md) validate too.
  const real = readdirSync(new URL('real/', dir)).filter((f) => f.endsWith('.yaml'));
  assert.deepEqual(real.sort(), ['grpo-word-problems.yaml', 'marft-word-problems.yaml', 'mas-grpo-word-problems.yaml', 'mas-opd-word-problems.yaml']);
  for (const f of real) await loadConfig(join(dir.pathname, 'real', f));
  // Duo+GRPO on the real model is the MARFT run with group-relative advantages: the same task, model,
  // adapters, episodes per step, steps, learning rate and evaluation.
  const marft = await loadConfig(join(dir.pathname, 'real', 'marft-word-problems.yaml'));
  const grpo = await loadConfig(join(dir.pathname, 'real', 'grpo-word-problems.yaml'));
  assert.equal(grpo.algorithm, 'grpo');
  assert.deepEqual([grpo.task, grpo.model, grpo.policy, grpo.train.steps, grpo.actor.optim.lr, grpo.actor.klCoef, grpo.eval], [marft.task, marft.model, marft.policy, marft.train.steps, marft.actor.optim.lr, marft.actor.klCoef, marft.eval]);
  assert.equal(grpo.rollout.batchSize * grpo.rollout.rolloutsPerPrompt, marft.rollout.batchSize * marft.rollout.rolloutsPerPrompt);
  // MAS+GRPO on the real model is the Duo+GRPO run with the Reasoner–Tool-User pair in place of the Duo:
  // the same problems, model, adapters, budget and evaluation; only the workflow, its horizon, the
  // prompt cap (a later turn's prompt carries both agents' outputs) and the micro-batch size differ.
  const masGrpo = await loadConfig(join(dir.pathname, 'real', 'mas-grpo-word-problems.yaml'));
  assert.equal(masGrpo.algorithm, 'grpo');
  assert.deepEqual({ ...masGrpo.task.options, workflow: 'duo', horizon: undefined }, { ...grpo.task.options, horizon: undefined });
  assert.deepEqual([masGrpo.task.options.workflow, masGrpo.task.options.horizon], ['reasoner-tooluser', 2]);
  assert.deepEqual([masGrpo.model, masGrpo.policy, masGrpo.actor, masGrpo.advantage, masGrpo.eval, masGrpo.train.steps], [grpo.model, grpo.policy, grpo.actor, grpo.advantage, grpo.eval, grpo.train.steps]);
  assert.deepEqual({ ...masGrpo.rollout, maxPromptTokens: 0 }, { ...grpo.rollout, maxPromptTokens: 0 });
  // The spelled-out defaults file is exactly the schema's defaults.
  assert.deepEqual(await loadConfig(join(dir.pathname, 'marft-defaults.yaml')), parseConfig({}));
});

test('sizes that cannot fit in memory are refused, saying why; every integer key has an upper bound', () => {
  assert.throws(() => parseConfig({ rollout: { batchSize: 1e9 } }), /^ConfigError: rollout\.batchSize: got 1000000000, expected an integer in \[1, 65536\] \(the episodes of one step are held in memory together\)$/);
  assert.throws(() => parseConfig({ rollout: { batchSize: 1024, rolloutsPerPrompt: 128 } }), /^ConfigError: rollout: batchSize × rolloutsPerPrompt = 1024 × 128 episodes per step, expected at most 65536 \(the episodes of one step/);
  assert.equal(parseConfig({ rollout: { batchSize: 1024, rolloutsPerPrompt: 64 } }).rollout.rolloutsPerPrompt, 64);
  assert.throws(() => parseConfig({ rollout: { maxNewTokens: 1e9 } }), /rollout\.maxNewTokens: got 1000000000, expected an integer in \[1, 1048576\] \(no model's context is longer\)/);
  assert.throws(() => parseConfig({ train: { microBatchTokens: 2 ** 31 } }), /train\.microBatchTokens: .*\(a micro-batch's activations are held in memory together\)/);
  assert.throws(() => parseConfig({ eval: { problems: 1e9 } }), /eval\.problems: got 1000000000, expected an integer in \[0, 65536\]/);
  assert.throws(() => parseConfig({ critic: { mlpHidden: [64, 1e7] } }), /critic\.mlpHidden: got \[64,10000000\], expected a list of integers in \[1, 65536\] \(the head's weights/);
  // The largest allowed values pass (the bounds refuse only what is past them).
  assert.equal(parseConfig({ rollout: { batchSize: 65536 } }).rollout.batchSize, 65536);
  assert.equal(parseConfig({ seed: 4294967295 }).seed, 4294967295);

  const unbounded: string[] = [];
  const walk = (node: SchemaNode, path: string): void => {
    if (node.kind === 'object') for (const [k, child] of Object.entries(node.fields)) walk(child, path ? `${path}.${k}` : k);
    else if ((node.kind === 'number' && node.integer) || node.kind === 'number-list') {
      if (node.max === undefined || !node.maxWhy) unbounded.push(path);
      else assert.ok((Array.isArray(node.default) ? node.default : [node.default]).every((d) => d <= node.max!), `${path}: the default is above the bound`);
    }
  };
  walk(configSchema, '');
  assert.deepEqual(unbounded, [], 'integer keys without an upper bound and its reason');
  // The docs table says the bound and why.
  const row = docRows(configSchema).find((r) => r.key === 'rollout.batchSize')!;
  assert.equal(row.allowed, 'an integer in [1, 65536]');
  assert.match(row.doc, /\(at most 65536: the episodes of one step are held in memory together\)$/);
});

test('non-finite numbers are named as such (YAML .nan/.inf, JSON 1e999, --set), never as null', async () => {
  assert.throws(() => parseConfig({ actor: { optim: { lr: NaN } } }), /^ConfigError: actor\.optim\.lr: got NaN, expected a finite number >= 0$/);
  assert.throws(() => parseConfig({ rollout: { temperature: Infinity } }), /rollout\.temperature: got Infinity, expected a finite number >= 0$/);
  assert.throws(() => parseConfig({ seed: -Infinity }), /seed: got -Infinity, expected a finite integer in \[0, 4294967295\]$/);
  assert.throws(() => parseConfig({ critic: { mlpHidden: [64, NaN] } }), /critic\.mlpHidden: got \[64,NaN\], expected a list of integers/);
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-nan-'));
  writeFileSync(join(dir, 'nan.yaml'), 'task: { name: bandit }\nactor: { optim: { lr: .nan } }\n');
  await assert.rejects(loadConfig(join(dir, 'nan.yaml')), /nan\.yaml: actor\.optim\.lr: got NaN, expected a finite number >= 0$/);
  writeFileSync(join(dir, 'inf.yaml'), 'task: { name: bandit }\nadvantage: { gamma: -.inf }\n');
  await assert.rejects(loadConfig(join(dir, 'inf.yaml')), /inf\.yaml: advantage\.gamma: got -Infinity, expected a finite number in \[0, 1\]$/);
  writeFileSync(join(dir, 'big.json'), '{"task": {"name": "bandit"}, "rollout": {"topP": 1e999}}');
  await assert.rejects(loadConfig(join(dir, 'big.json')), /big\.json: rollout\.topP: got Infinity, expected a finite number in \(0, 1\]$/);
});

test('an empty configuration is refused (a file must name task.name), and so is one without task.name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-empty-'));
  const empty = /: the config is empty: it must name at least task\.name, the task to train on/;
  for (const [name, text] of [['empty.yaml', ''], ['blank.yaml', '\n  \n'], ['comments.yaml', '# nothing here\n# at all\n'], ['null.yaml', 'null\n'], ['braces.yaml', '{}\n'], ['empty.json', ''], ['braces.json', '{}']]) {
    writeFileSync(join(dir, name), text);
    await assert.rejects(loadConfig(join(dir, name)), (e: Error) => e.name === 'ConfigError' && e.message.startsWith(join(dir, name)) && empty.test(e.message), name);
  }
  writeFileSync(join(dir, 'noname.yaml'), 'algorithm: ippo\n');
  await assert.rejects(loadConfig(join(dir, 'noname.yaml')), /noname\.yaml: task\.name is missing: a configuration names the task it trains on/);
  writeFileSync(join(dir, 'options-only.yaml'), 'task: { options: { symbols: 3 } }\n');
  await assert.rejects(loadConfig(join(dir, 'options-only.yaml')), /task\.name is missing/);
  // A key error is reported before the missing name (it is the more specific mistake).
  writeFileSync(join(dir, 'typo.yaml'), 'algoritm: ippo\n');
  await assert.rejects(loadConfig(join(dir, 'typo.yaml')), /typo\.yaml: algoritm: unknown key/);
  // The minimum passes; so does an empty file whose task a --set names.
  writeFileSync(join(dir, 'minimal.yaml'), 'task: { name: bandit }\n');
  assert.equal((await loadConfig(join(dir, 'minimal.yaml'))).task.name, 'bandit');
  assert.equal((await loadConfig(join(dir, 'empty.yaml'), ['task.name=bandit'])).task.name, 'bandit');
  // parseConfig (configurations built in code) keeps filling every default.
  assert.equal(parseConfig({}).task.name, 'coordination-game');
});

test('a configuration path that is missing or a folder is one line saying so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-path-'));
  mkdirSync(join(dir, 'folder.yaml'));
  await assert.rejects(loadConfig(join(dir, 'folder.yaml')), /folder\.yaml: is a folder, not a configuration file$/);
  await assert.rejects(loadConfig(join(dir, 'missing.yaml')), /missing\.yaml: no such file$/);
});
