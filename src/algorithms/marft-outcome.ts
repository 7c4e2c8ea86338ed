// Trajectory-level MARFT (spec section 4): outcome-only rewards (GRPO/DAPO style) fit as
// action-level optimisation with the reward at the end: α times the episode's outcome
// (Episode.outcome, not a sum of per-action rewards; α = reward.teamWeight) is the reward of its
// final action, and action-level GAE carries the credit back through the agents and steps.
import { centralisedCritic, policyAdapters, ppoWithCritic, type Algorithm } from './types.ts';

export const marftOutcome: Algorithm = {
  name: 'marft-outcome',
  summary: 'trajectory-level MARFT: the outcome reward at the last action, action-level PPO',
  plan: (agents, config) => ({
    ...ppoWithCritic('action', config),
    policies: policyAdapters(agents, config.policy.parameterSharing),
    critics: centralisedCritic(agents),
    chain: 'joint',
    reward: 'outcome',
    criticInput: 'joint',
  }),
};
