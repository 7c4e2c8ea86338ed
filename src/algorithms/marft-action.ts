// Action-level MARFT (spec section 4): each agent's action is one timestep, scored in its own
// prompt (which contains its predecessors' messages: predecessor-conditioned PPO); one centralised
// critic reading the joint state of the step; the team reward once per step, at its last action;
// GAE across agents then environment steps, so each agent's advantage is its share of the joint
// advantage; shared or per-agent policy adapters.
import { centralisedCritic, policyAdapters, ppoWithCritic, type Algorithm } from './types.ts';

export const marftAction: Algorithm = {
  name: 'marft-action',
  summary: 'action-level MARFT: predecessor-conditioned PPO with a centralised critic',
  plan: (agents, config) => ({
    ...ppoWithCritic('action', config),
    policies: policyAdapters(agents, config.policy.parameterSharing),
    critics: centralisedCritic(agents),
    chain: 'joint',
    reward: 'step-end',
    criticInput: 'joint',
  }),
};
