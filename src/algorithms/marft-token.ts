// Token-level MARFT (spec section 4): every generated token is a PPO unit; per-token TD errors and
// GAE with γ_w inside an action, γ_a between steps and no discount across an agent boundary.
import { centralisedCritic, policyAdapters, ppoWithCritic, type Algorithm } from './types.ts';

export const marftToken: Algorithm = {
  name: 'marft-token',
  summary: 'token-level MARFT: per-token GAE (γ_w, γ_a) and per-token PPO with a centralised critic',
  plan: (agents, config) => ({
    ...ppoWithCritic('token', config),
    policies: policyAdapters(agents, config.policy.parameterSharing),
    critics: centralisedCritic(agents),
    chain: 'joint',
    reward: 'step-end',
    criticInput: 'joint',
  }),
};
