// GRPO (Shao et al., DeepSeekMath): G episodes per problem; each response's advantage is its
// reward relative to its group, (r − mean)/(std + eps), or r − mean with advantage.groupScale:
// none (the "no std" variant of Dr. GRPO), the same for every token; token-level PPO-clip; no
// critic; the KL term against the frozen base when actor.klCoef > 0. Which row of the MAS-OPD
// tables it is depends on the task's workflow: single-agent (SA+ST+GRPO), single-agent revising
// over turns (SA+MT+GRPO), or a multi-agent workflow (MAS+GRPO: each role compared with its own
// responses to the same problem, its adapter updated from them). A group is (problem, role), every
// turn together, as the MAS-OPD paper defines MAS+GRPO (turn-wise grouping is AT-GRPO's); with
// advantage.groupBy: role-turn, (problem, role, turn).
import { groupPpo, groupScaled, policyAdapters, type Algorithm } from './types.ts';

export const grpo: Algorithm = {
  name: 'grpo',
  summary: 'GRPO: group-relative advantages over G episodes per problem, per role (advantage.groupBy: per role and turn); token-level PPO-clip; no critic',
  plan: (agents, config) => ({
    ...groupPpo(groupScaled(config)),
    sampling: 'group',
    groupKey: config.advantage.groupBy,
    policies: policyAdapters(agents, config.policy.parameterSharing),
  }),
};
