// The algorithm presets (examples/presets/<algorithm>-<source>.yaml) validate, and each carries the
// settings of the paper or the authors' code it names, read back from the file and compared with the
// numbers written here from the source (docs/algorithms.md says where each one comes from):
//   - the MAS-OPD paper's shared settings (App. D.6) for every <algorithm>-mas-opd.yaml, the MAS-OPD
//     preset itself and the prompt-only rows' decoding;
//   - each authors' preset its authors' defaults (DeepSeekMath for GRPO, Gen-Verse/CURE for CURE,
//     PettingLLMs for AT-GRPO, OpenMLRL/CoMLRL for MAGRPO).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { MarftConfig } from '../../src/config/schema.ts';

const dir = new URL('../../examples/presets/', import.meta.url).pathname;
const examples = new URL('../../examples/', import.meta.url).pathname;

test('every preset validates, is named <algorithm>-<source>.yaml, and its plan fits a two-agent task', async () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(files, ['at-grpo-authors.yaml', 'at-grpo-mas-opd.yaml', 'cure-authors.yaml', 'cure-mas-opd.yaml', 'grpo-authors.yaml', 'grpo-mas-opd.yaml', 'magrpo-authors.yaml', 'magrpo-mas-opd.yaml', 'marft-mas-opd.yaml']);
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

/** The MAS-OPD paper's settings shared by every method it trains (App. D.6). */
const MAS_OPD_SHARED = {
  steps: 150,
  batchSize: 128,
  optim: { lr: 1e-6, weightDecay: 0.01, schedule: 'constant', warmupRatio: 0 },
  maxGradNorm: 1.0,
  training: { temperature: 1.0, topP: 1.0, topK: 0 },
  evaluation: { temperature: 0.6, topP: 0.95, topK: 20, seeds: 5 },
  maxPromptTokens: 8192,
  maxNewTokens: 4096,
  /** Minibatch 64 of 128 "where applicable": two policy minibatches per step. */
  minibatches: 2,
};

/** What each MAS-OPD-setting file states apart from the shared settings. */
const IN_MAS_OPD_SETTING: Record<string, { algorithm: string; workflow: string; horizon: number; g: number; minibatches?: number; maxGradNorm?: number }> = {
  'presets/grpo-mas-opd.yaml': { algorithm: 'grpo', workflow: 'reasoner-tooluser', horizon: 4, g: 4 },
  // Unclipped REINFORCE: a second minibatch would be off-policy with nothing to correct it.
  'presets/magrpo-mas-opd.yaml': { algorithm: 'magrpo', workflow: 'reasoner-tooluser', horizon: 4, g: 4, minibatches: 1 },
  'presets/at-grpo-mas-opd.yaml': { algorithm: 'at-grpo', workflow: 'reasoner-tooluser', horizon: 4, g: 4 },
  'presets/cure-mas-opd.yaml': { algorithm: 'cure', workflow: 'coder-tester', horizon: 1, g: 4 },
  // The paper's MARFT row clips gradient norms at 0.5.
  'presets/marft-mas-opd.yaml': { algorithm: 'marft-action', workflow: 'reasoner-tooluser', horizon: 4, g: 1, maxGradNorm: 0.5 },
};

function sharedSettings(c: MarftConfig) {
  return {
    steps: c.train.steps,
    batchSize: c.rollout.batchSize,
    optim: { lr: c.actor.optim.lr, weightDecay: c.actor.optim.weightDecay, schedule: c.actor.optim.schedule, warmupRatio: c.actor.optim.warmupRatio },
    training: { temperature: c.rollout.temperature, topP: c.rollout.topP, topK: c.rollout.topK },
    evaluation: { temperature: c.eval.temperature, topP: c.eval.topP, topK: c.eval.topK, seeds: c.eval.seeds },
    maxPromptTokens: c.rollout.maxPromptTokens,
    maxNewTokens: c.rollout.maxNewTokens,
  };
}

test('every preset in the MAS-OPD setting carries the paper’s shared settings (App. D.6) on its system', async () => {
  const { minibatches, maxGradNorm, ...shared } = MAS_OPD_SHARED;
  for (const [f, own] of Object.entries(IN_MAS_OPD_SETTING)) {
    const c = await loadConfig(join(examples, f));
    assert.deepEqual(sharedSettings(c), shared, f);
    assert.equal(c.actor.optim.maxGradNorm, own.maxGradNorm ?? maxGradNorm, `${f}: clip-norm`);
    assert.equal(c.actor.minibatches, own.minibatches ?? minibatches, `${f}: minibatches`);
    assert.equal(c.actor.epochs, 1, `${f}: one pass over the batch`);
    assert.deepEqual([c.algorithm, c.task.options.workflow, c.task.options.horizon, c.rollout.rolloutsPerPrompt], [own.algorithm, own.workflow, own.horizon, own.g], f);
    if (c.algorithm !== 'magrpo') assert.deepEqual([c.actor.clipLow, c.actor.clipHigh], [0.2, 0.2], `${f}: clip 0.2`);
  }
  // MAS-OPD itself: one episode per problem, minibatches of 64 episodes (opd.minibatchSize).
  const opd = await loadConfig(join(examples, 'mas-opd-paper.yaml'));
  assert.deepEqual(sharedSettings(opd), shared);
  assert.deepEqual([opd.opd.minibatchSize, opd.actor.optim.maxGradNorm, opd.task.options.workflow, opd.task.options.horizon], [64, 1.0, 'reasoner-tooluser', 4]);
});

test('the MAS-OPD-setting presets’ own choices: MAS+GRPO per role over every turn, MAGRPO’s γ 0.9, AT-GRPO’s α = 1 and dual clip, CURE’s KL', async () => {
  const grpo = await loadConfig(join(dir, 'grpo-mas-opd.yaml'));
  const grpoPlan = ALGORITHM_REGISTRY.grpo.plan(['reasoner', 'tool_user'], grpo);
  assert.deepEqual([grpo.advantage.groupBy, grpoPlan.groupKey, grpo.actor.klCoef, grpo.policy.parameterSharing], ['role', 'role', 0, false]);
  const magrpo = await loadConfig(join(dir, 'magrpo-mas-opd.yaml'));
  // MAGRPO's authors (CoMLRL) discount turns by 0.9; the paper's G joint trajectories are independent episodes.
  assert.deepEqual([magrpo.advantage.gamma, magrpo.rollout.jointTree], [0.9, 'independent']);
  const atGrpo = await loadConfig(join(dir, 'at-grpo-mas-opd.yaml'));
  const atPlan = ALGORITHM_REGISTRY['at-grpo'].plan(['reasoner', 'tool_user'], atGrpo);
  assert.deepEqual([atGrpo.reward.teamWeight, atGrpo.reward.localWeight], [1, 1], 'reward α·team + local with α = 1');
  assert.deepEqual([atPlan.dualClip, atPlan.kl, atPlan.groupDeviation, atPlan.groupKey], [3, false, 'unbiased', 'role-turn']);
  const cure = await loadConfig(join(dir, 'cure-mas-opd.yaml'));
  assert.deepEqual([cure.actor.klCoef, cure.actor.klEstimator, cure.actor.optim.lr], [0.01, 'k3', 1e-6]);
});

test('the authors’ presets: GRPO DeepSeekMath’s, CURE Gen-Verse/CURE’s defaults, AT-GRPO PettingLLMs’, MAGRPO CoMLRL’s', async () => {
  const grpo = await loadConfig(join(dir, 'grpo-authors.yaml'));
  assert.deepEqual([grpo.actor.optim.lr, grpo.actor.klCoef, grpo.rollout.rolloutsPerPrompt, grpo.rollout.batchSize * grpo.rollout.rolloutsPerPrompt, grpo.actor.epochs, grpo.actor.clipLow], [1e-6, 0.04, 64, 1024, 1, 0.2]);
  // CURE: 16 programs and 16 tests per problem, 120 steps, lr 1e-6, k3 KL 0.01, clip 0.2, sampling at 1.0 with top-p 0.95.
  const cure = await loadConfig(join(dir, 'cure-authors.yaml'));
  assert.deepEqual(
    [cure.rollout.rolloutsPerPrompt, cure.train.steps, cure.actor.optim.lr, cure.actor.klCoef, cure.actor.klEstimator, cure.actor.clipLow, cure.actor.clipHigh, cure.rollout.temperature, cure.rollout.topP],
    [16, 120, 1e-6, 0.01, 'k3', 0.2, 0.2, 1.0, 0.95],
  );
  assert.deepEqual([cure.task.options.workflow, cure.task.options.horizon], ['coder-tester', 1]);
  const curePlan = ALGORITHM_REGISTRY.cure.plan(['coder', 'tester'], cure);
  assert.deepEqual([curePlan.policies, curePlan.rewards, curePlan.kl, curePlan.dropFlatGroups], [{ coder: 'policy', tester: 'policy' }, 'cure', true, true]);
  // AT-GRPO: K 8, batch 32, 5 turns, lr 5e-6, temperature 1.0, top-p 0.9, top-k 20, clip 0.2, one epoch, no KL, α = 1.
  const at = await loadConfig(join(dir, 'at-grpo-authors.yaml'));
  assert.deepEqual(
    [at.rollout.rolloutsPerPrompt, at.rollout.batchSize, at.task.options.horizon, at.actor.optim.lr, at.rollout.temperature, at.rollout.topP, at.rollout.topK, at.actor.clipLow, at.actor.clipHigh, at.actor.epochs, at.reward.teamWeight, at.reward.localWeight],
    [8, 32, 5, 5e-6, 1.0, 0.9, 20, 0.2, 0.2, 1, 1, 1],
  );
  const atPlan = ALGORITHM_REGISTRY['at-grpo'].plan(['reasoner', 'tool_user'], at);
  assert.deepEqual([atPlan.dualClip, atPlan.kl, atPlan.groupDeviation], [3, false, 'unbiased']);
  // MAGRPO: K 4, lr 5e-6, temperature 0.6, top-p 0.6, top-k 50, 256 tokens, 2 turns, γ 0.9, every joint sample expanded.
  const magrpo = await loadConfig(join(dir, 'magrpo-authors.yaml'));
  assert.deepEqual(
    [magrpo.rollout.rolloutsPerPrompt, magrpo.actor.optim.lr, magrpo.rollout.temperature, magrpo.rollout.topP, magrpo.rollout.topK, magrpo.rollout.maxNewTokens, magrpo.task.options.horizon, magrpo.advantage.gamma, magrpo.rollout.jointTree],
    [4, 5e-6, 0.6, 0.6, 50, 256, 2, 0.9, 'all'],
  );
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

test('the prompt-only rows (SA+ST, SA+MT, MAS) are evaluation configurations on the right workflows, decoding as the MAS-OPD paper evaluates', async () => {
  const rows = join(examples, 'prompt-only');
  assert.deepEqual(readdirSync(rows).sort(), ['mas.yaml', 'sa-mt.yaml', 'sa-st.yaml']);
  for (const [f, workflow] of [['sa-st.yaml', 'sa-st'], ['sa-mt.yaml', 'sa-mt'], ['mas.yaml', 'reasoner-tooluser']] as const) {
    const c = await loadConfig(join(rows, f));
    assert.equal(c.task.options.workflow, workflow, f);
    assert.equal(c.task.name, 'workflow', f);
    const { temperature, topP, topK, seeds } = c.eval;
    assert.deepEqual({ temperature, topP, topK, seeds }, MAS_OPD_SHARED.evaluation, f);
    assert.deepEqual([c.rollout.maxNewTokens, c.rollout.maxPromptTokens], [MAS_OPD_SHARED.maxNewTokens, MAS_OPD_SHARED.maxPromptTokens], f);
  }
});
