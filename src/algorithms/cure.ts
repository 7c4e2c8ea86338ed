// CURE (Wang et al., "Co-Evolving LLM Coder and Unit Tester via Reinforcement Learning"; their code,
// Gen-Verse/CURE), code only: one shared policy acts as Coder and as Tester (the coder-tester pair
// with horizon 1, both acting once from the problem alone: planFor refuses another horizon before
// any rollout); the rolloutsPerPrompt episodes of a problem give n programs and n unit tests,
// executed against each other in the sandbox; rewards per src/env/cure-rewards.ts (program: golden
// pass rate; test, only when some program is correct: sign from the correct programs, scale from
// the wrong ones), each standardised within its own group (the Coders' responses, the Testers'
// responses: the role-turn key separates agents, and there is one turn) with the population
// deviation; groups with no spread are left out of the update (the authors drop them); token-level
// PPO-clip with the k3 KL term (examples/presets/cure-authors.yaml: KL 0.01, lr 1e-6); no critic.
import { groupPpo, policyAdapters, type Algorithm } from './types.ts';

export const cure: Algorithm = {
  name: 'cure',
  summary: 'CURE: one shared policy as Coder and Tester, programs and unit tests run against each other; standardised program and test rewards, flat groups dropped; token-level PPO-clip with KL',
  plan: (agents) => ({
    // Standardised within each group, whatever advantage.groupScale says.
    ...groupPpo('group-relative'),
    sampling: 'group',
    groupKey: 'role-turn',
    groupDeviation: 'population',
    dropFlatGroups: true,
    // One policy for both roles, whatever policy.parameterSharing says.
    policies: policyAdapters(agents, true),
    rewards: 'cure',
    // Each action's CURE reward alone (the task records it as the action's own): no team reward, whatever reward.* says.
    reward: 'local',
  }),
};
