// GRPO (Shao et al., DeepSeekMath): G episodes per problem; each response's advantage is its
// reward relative to its group, (r − mean)/(std + eps), or r − mean with advantage.groupScale:
// none (the "no std" variant of Dr. GRPO), the same for every token; token-level PPO-clip; no
// critic; the KL term against the frozen base when actor.klCoef > 0. Which row of the MAS-OPD
// tables it is depends on the task's workflow: single-agent (SA+ST+GRPO), single-agent revising
// over turns (SA+MT+GRPO), or a multi-agent workflow (MAS+GRPO: each role compared with its own
// responses to the same problem, its adapter updated from them).
import { groupPpo, groupScaled, policyAdapters, type Algorithm } from './types.ts';

export const grpo: Algorithm = {
  name: 'grpo',
  summary: 'GRPO: group-relative advantages over G episodes per problem, per role and turn; token-level PPO-clip; no critic',
  plan: (agents, config) => ({
    ...groupPpo(groupScaled(config)),
    sampling: 'group',
    policies: policyAdapters(agents, config.policy.parameterSharing),
  }),
};
