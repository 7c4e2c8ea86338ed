// Configuration: App. B defaults, errors naming the dotted key and the allowed values, YAML/JSON files, docs in sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseConfig } from '../../src/config/load.ts';
import { configReference } from '../../src/config/docs.ts';

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
  assert.throws(() => parseConfig({ advantage: { gamma: 1.5 } }), /advantage\.gamma: got 1\.5, expected a number >= 0 <= 1/);
  assert.throws(() => parseConfig({ actor: { optim: { lr: 'fast' } } }), /actor\.optim\.lr: got "fast", expected a number >= 0/);
  assert.throws(() => parseConfig({ train: { steps: 2.5 } }), /train\.steps: got 2\.5, expected an integer >= 1/);
  assert.throws(() => parseConfig({ critic: { kindd: 'mlp' } }), /critic\.kindd: unknown key; allowed keys of critic: kind, mlpHidden/);
  assert.throws(() => parseConfig({ algoritm: 'ippo' }), /algoritm: unknown key; allowed keys: seed, algorithm/);
  assert.throws(() => parseConfig({ policy: { targetModules: ['q_proj', 'lm_head'] } }), /policy\.targetModules: .*expected a list of 'q_proj'/);
  assert.throws(() => parseConfig({ critic: { mlpHidden: [64, -1] } }), /critic\.mlpHidden: got \[64,-1\], expected a list of integers >= 1/);
});

test('YAML and JSON files load; a bad file names itself and the key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-'));
  writeFileSync(join(dir, 'a.yaml'), 'algorithm: ippo\nadvantage:\n  gammaAgent: 0.99\n');
  const a = await loadConfig(join(dir, 'a.yaml'));
  assert.equal(a.algorithm, 'ippo');
  assert.equal(a.advantage.gammaAgent, 0.99);
  writeFileSync(join(dir, 'b.json'), JSON.stringify({ rollout: { batchSize: 0 } }));
  await assert.rejects(loadConfig(join(dir, 'b.json')), /b\.json: rollout\.batchSize: got 0, expected an integer >= 1/);
  writeFileSync(join(dir, 'c.yaml'), 'a: [1,\n');
  await assert.rejects(loadConfig(join(dir, 'c.yaml')), /c\.yaml: not valid YAML/);
});

test('docs/config.md is generated from the schema and up to date', () => {
  assert.equal(readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8'), configReference());
});

test('every example config validates', async () => {
  const dir = new URL('../../examples/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.length >= 3, `examples: ${files.join(', ')}`);
  for (const f of files) await loadConfig(join(dir.pathname, f));
  // The spelled-out defaults file is exactly the schema's defaults.
  assert.deepEqual(await loadConfig(join(dir.pathname, 'marft-defaults.yaml')), parseConfig({}));
});
