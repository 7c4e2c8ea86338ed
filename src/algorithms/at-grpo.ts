// AT-GRPO (Zhao et al., "Stronger Together: On-Policy Reinforcement Learning for Collaborative
// LLMs"): tree sampling (src/workflow/tree-sampling.ts, as the authors' code does it): at every turn
// K = rollout.rolloutsPerPrompt identical copies of the episode state each play the whole turn, the
// copy with the best turn reward (α·team + localWeight·Σ local of the copy: the run's reward
// settings, src/train/rewards.ts) is the one the episode continues from, and every copy's actions
// are trained on; a candidate's reward is α·team + local with its own copy's turn (AT-GRPO: α = 1,
// the local weight 1, the defaults); groups keyed (problem, turn, agent), so the K candidates of one
// group share the turn's starting state; GRPO's advantage within the group (std or, with
// advantage.groupScale: none, mean only); token-level PPO-clip, the KL term when actor.klCoef > 0;
// no critic; optionally the groups whose rewards are all equal are left out of the update
// (advantage.dropFlatGroups).
import { groupPpo, groupScaled, policyAdapters, type Algorithm } from './types.ts';

export const atGrpo: Algorithm = {
  name: 'at-grpo',
  summary: 'AT-GRPO: tree sampling (K copies of each turn, the best copy continued, all trained on), groups per (problem, turn, agent), token-level PPO-clip; no critic',
  plan: (agents, config) => ({
    // Rewards broadcast: each candidate's own, α·team + local with its copy's turn (src/train/batch.ts).
    // The group-relative key is (EpisodeGroup, agent, turn): with one tree per problem, (problem, turn, agent).
    ...groupPpo(groupScaled(config)),
    sampling: 'tree',
    policies: policyAdapters(agents, config.policy.parameterSharing),
    dropFlatGroups: config.advantage.dropFlatGroups,
  }),
};
