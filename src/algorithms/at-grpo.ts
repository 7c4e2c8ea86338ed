// AT-GRPO (Zhao et al., "Stronger Together: On-Policy Reinforcement Learning for Collaborative
// LLMs"): tree sampling (src/workflow/tree-sampling.ts): at every turn each agent draws K =
// rollout.rolloutsPerPrompt candidate actions from identical copies of the episode state, the
// best-reward one is executed and all K are trained on; a candidate's reward is α·team + local
// (the task's reward assignment: AT-GRPO sets α = 1 and the local weight 1); groups keyed
// (problem, turn, agent), so the K candidates of one group differ only in that agent's action;
// GRPO's advantage within the group (std or, with advantage.groupScale: none, mean only);
// token-level PPO-clip, the KL term when actor.klCoef > 0; no critic; optionally the groups whose
// rewards are all equal are left out of the update (advantage.dropFlatGroups).
import { groupPpo, groupScaled, policyAdapters, type Algorithm } from './types.ts';

export const atGrpo: Algorithm = {
  name: 'at-grpo',
  summary: 'AT-GRPO: tree sampling (K candidates per agent per turn, the best executed, all trained on), groups per (problem, turn, agent), token-level PPO-clip; no critic',
  plan: (agents, config) => ({
    // Rewards broadcast: each candidate's own reward (α·team + local, as the runtime assigned it in its copy).
    // The group-relative key is (EpisodeGroup, agent, turn): with one tree per problem, (problem, turn, agent).
    ...groupPpo(groupScaled(config)),
    sampling: 'tree',
    policies: policyAdapters(agents, config.policy.parameterSharing),
    dropFlatGroups: config.advantage.dropFlatGroups,
  }),
};
