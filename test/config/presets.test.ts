// The algorithm presets (examples/presets/<algorithm>-<source>.yaml) validate, and carry the
// settings docs/algorithms.md attributes to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { loadConfig } from '../../src/config/load.ts';

const dir = new URL('../../examples/presets/', import.meta.url).pathname;

test('every preset validates, is named <algorithm>-<source>.yaml, and its plan fits a two-agent task', async () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(files, ['cure-authors.yaml', 'grpo-authors.yaml', 'grpo-mas-opd.yaml', 'magrpo-mas-opd.yaml', 'marft-mas-opd.yaml']);
  for (const f of files) {
    const config = await loadConfig(join(dir, f));
    // marft-mas-opd.yaml names the family (its algorithm is marft-action).
    assert.ok(f.startsWith(`${config.algorithm}-`) || (f.startsWith('marft-') && config.algorithm.startsWith('marft-')), `${f} sets algorithm ${config.algorithm}`);
    const plan = ALGORITHM_REGISTRY[config.algorithm].plan(['a', 'b'], config);
    if (config.algorithm === 'marft-action') continue; // the MARFT preset keeps its critic and samples independent episodes
    assert.equal(plan.critics, null, f);
    assert.ok(config.rollout.rolloutsPerPrompt >= 2, f);
  }
});

test('the MAS-OPD presets use the paper’s settings; the GRPO authors’ preset DeepSeekMath’s', async () => {
  for (const f of ['grpo-mas-opd.yaml', 'magrpo-mas-opd.yaml']) {
    const c = await loadConfig(join(dir, f));
    assert.deepEqual([c.actor.optim.lr, c.rollout.batchSize, c.rollout.rolloutsPerPrompt, c.rollout.temperature], [1e-6, 128, 4, 1], f);
  }
  const masGrpo = await loadConfig(join(dir, 'grpo-mas-opd.yaml'));
  assert.deepEqual([masGrpo.actor.clipLow, masGrpo.actor.clipHigh], [0.2, 0.2]);
  const authors = await loadConfig(join(dir, 'grpo-authors.yaml'));
  assert.deepEqual([authors.actor.optim.lr, authors.actor.klCoef, authors.rollout.rolloutsPerPrompt, authors.rollout.batchSize * authors.rollout.rolloutsPerPrompt], [1e-6, 0.04, 64, 1024]);
});

test('the CURE preset: one shared policy, clip 0.2, k3 KL 0.01, lr 1e-6, the coder-tester pair for one turn', async () => {
  const c = await loadConfig(join(dir, 'cure-authors.yaml'));
  assert.deepEqual([c.actor.optim.lr, c.actor.klCoef, c.actor.klEstimator, c.actor.clipLow, c.actor.clipHigh], [1e-6, 0.01, 'k3', 0.2, 0.2]);
  assert.deepEqual([c.task.options.workflow, c.task.options.horizon], ['coder-tester', 1]);
  const plan = ALGORITHM_REGISTRY.cure.plan(['coder', 'tester'], c);
  assert.deepEqual([plan.policies, plan.rewards, plan.kl], [{ coder: 'policy', tester: 'policy' }, 'cure', true]);
});

test('the MARFT preset of the MAS-OPD setting: independent role policies, frozen base + MLP(64) critic, the paper’s PPO settings', async () => {
  const c = await loadConfig(join(dir, 'marft-mas-opd.yaml'));
  assert.equal(c.algorithm, 'marft-action');
  assert.equal(c.policy.parameterSharing, false);
  assert.deepEqual([c.critic.kind, c.critic.mlpHidden, c.critic.optim.lr, c.critic.valueLoss], ['mlp', [64], 1e-5, 'huber']);
  assert.deepEqual([c.actor.optim.lr, c.actor.clipLow, c.actor.clipHigh, c.actor.epochs, c.actor.actionNormalisation, c.actor.optim.maxGradNorm, c.critic.optim.maxGradNorm], [1e-6, 0.2, 0.2, 1, 'token', 0.5, 0.5]);
  assert.deepEqual([c.advantage.gamma, c.advantage.lambda, c.rollout.batchSize, c.rollout.temperature], [0.99, 0.95, 128, 1]);
  const plan = ALGORITHM_REGISTRY['marft-action'].plan(['reasoner', 'tool_user'], c);
  assert.deepEqual(plan.policies, { reasoner: 'policy-reasoner', tool_user: 'policy-tool_user' });
  assert.deepEqual(plan.critics, { reasoner: 'critic', tool_user: 'critic' });
});

test('the prompt-only rows (SA+ST, SA+MT, MAS) are evaluation configurations on the right workflows', async () => {
  const rows = new URL('../../examples/prompt-only/', import.meta.url).pathname;
  assert.deepEqual(readdirSync(rows).sort(), ['mas.yaml', 'sa-mt.yaml', 'sa-st.yaml']);
  for (const [f, workflow] of [['sa-st.yaml', 'sa-st'], ['sa-mt.yaml', 'sa-mt'], ['mas.yaml', 'reasoner-tooluser']] as const) {
    const c = await loadConfig(join(rows, f));
    assert.equal(c.task.options.workflow, workflow, f);
    assert.deepEqual([c.eval.temperature, c.task.name], [0.6, 'workflow'], f);
  }
});
