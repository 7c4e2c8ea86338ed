// IPPO (the baseline, spec section 4): an independent policy and critic per agent (2n adapters);
// each agent's GAE chain runs over its own actions only, with its own critic.
import { policyAdapters, ppoWithCritic, type Algorithm } from './types.ts';

export const ippo: Algorithm = {
  name: 'ippo',
  summary: 'independent PPO: a policy and a critic per agent, per-agent credit',
  plan: (agents, config) => ({
    ...ppoWithCritic('action', config),
    policies: policyAdapters(agents, false),
    critics: Object.fromEntries(agents.map((a) => [a, `critic-${a}`])),
    chain: 'per-agent',
    reward: 'broadcast',
    criticInput: 'own',
  }),
};
