// AT-GRPO (Zhao et al., "Stronger Together: On-Policy Reinforcement Learning for Collaborative
// LLMs"; their trainer, PettingLLMs): tree sampling (src/workflow/tree-sampling.ts, as the authors'
// code does it): at every turn K = rollout.rolloutsPerPrompt identical copies of the episode state
// each play the whole turn, the copy with the best turn reward (α·team + localWeight·Σ local of the
// copy: the run's reward settings, src/train/rewards.ts) is the one the episode continues from, and
// every copy's actions are trained on; a candidate's reward is α·team + local with its own copy's turn
// (AT-GRPO: α = 1, the local weight 1, the defaults); groups keyed (problem, turn, agent), so the K
// candidates of one group share the turn's starting state; GRPO's advantage within the group with the
// unbiased standard deviation (n − 1, as their trainer computes it; or, with advantage.groupScale:
// none, mean only); token-level PPO-clip with the dual clip 3; no KL term (whatever actor.klCoef says:
// their trainer has none), no entropy bonus, no critic; optionally the groups whose rewards are all
// equal are left out of the update (advantage.dropFlatGroups). Preset: examples/presets/at-grpo-authors.yaml.
import { groupPpo, groupScaled, policyAdapters, type Algorithm } from './types.ts';

/** AT-GRPO's dual clip c (their trainer's default). */
export const AT_GRPO_DUAL_CLIP = 3;

export const atGrpo: Algorithm = {
  name: 'at-grpo',
  summary: 'AT-GRPO: tree sampling (K copies of each turn, the best copy continued, all trained on), groups per (problem, turn, agent), token-level PPO-clip with dual clip 3; no critic, no KL',
  plan: (agents, config) => ({
    // Rewards broadcast: each candidate's own, α·team + local with its copy's turn (src/train/batch.ts).
    // With one tree per problem the key (EpisodeGroup, agent, turn) is (problem, turn, agent).
    ...groupPpo(groupScaled(config)),
    sampling: 'tree',
    groupKey: 'role-turn',
    groupDeviation: 'unbiased',
    dualClip: AT_GRPO_DUAL_CLIP,
    kl: false,
    policies: policyAdapters(agents, config.policy.parameterSharing),
    dropFlatGroups: config.advantage.dropFlatGroups,
  }),
};
