// The building blocks the algorithm files share. An algorithm is a small composition, chosen by name
// (src/algorithms/index.ts), of the plan's parts (src/train/types.ts, AlgorithmPlan):
//   sampling     one episode per problem draw, or G episodes per problem forming a group (EpisodeGroup)
//   policies     which adapter acts for (and learns from the samples of) which agent
//   critics      which critic values which agent's state, or null: no critic at all
//   reward       where rewards enter the credit chain
//   advantage    the advantage estimator, by name (src/train/credit/index.ts) or brought by the algorithm
//   policyLoss   the policy objective, by name (src/train/losses/policy-objectives.ts)
//   level        whether the objective's unit is an agent action or a generated token
// plus the knobs an algorithm's authors fix (batch whitening, running reward scale, KL term) and,
// where an algorithm needs them, its own hooks (rollout, prepare). The loop in src/train/loop.ts runs
// them all; docs/algorithms.md describes each algorithm and walks through adding one.
import type { MarftConfig } from '../config/schema.ts';
import type { AlgorithmPlan, CreditLevel } from '../train/types.ts';

export type { Algorithm, AlgorithmPlan, CreditLevel } from '../train/types.ts';

/** Adapter names: one shared policy, or one per agent. */
export function policyAdapters(agents: readonly string[], shared: boolean): Record<string, string> {
  return Object.fromEntries(agents.map((a) => [a, shared ? 'policy' : `policy-${a}`]));
}

export function centralisedCritic(agents: readonly string[]): Record<string, string> {
  return Object.fromEntries(agents.map((a) => [a, 'critic']));
}

/** What every PPO-with-critic algorithm of the MARFT family shares: GAE at its level, PPO-clip, the configured normalisations. */
export function ppoWithCritic(level: CreditLevel, config: MarftConfig): Pick<AlgorithmPlan, 'sampling' | 'level' | 'advantage' | 'policyLoss' | 'scaleRewards' | 'whitenAdvantages' | 'kl'> {
  return {
    sampling: 'independent',
    level,
    advantage: level === 'action' ? 'gae-action' : 'gae-token',
    policyLoss: 'ppo-clip',
    scaleRewards: config.advantage.normaliseRewards,
    whitenAdvantages: config.advantage.normaliseAdvantages,
    kl: true,
  };
}

/**
 * What the critic-free group algorithms with PPO-clip share (GRPO, AT-GRPO, CURE): each agent's own
 * chain with the team reward (plus its local reward) broadcast to every action, the group-relative
 * `advantage`, token-level PPO-clip, the KL term; the group statistics are the normalisation (no
 * running reward scale, no batch whitening on top).
 */
export function groupPpo(advantage: 'group-relative' | 'group-relative-no-std'): Pick<AlgorithmPlan, 'level' | 'critics' | 'chain' | 'reward' | 'criticInput' | 'advantage' | 'policyLoss' | 'scaleRewards' | 'whitenAdvantages' | 'kl'> {
  return {
    level: 'token',
    critics: null,
    chain: 'per-agent',
    reward: 'broadcast',
    criticInput: 'own',
    advantage,
    policyLoss: 'ppo-clip',
    scaleRewards: false,
    whitenAdvantages: false,
    kl: true,
  };
}

/** The group-relative estimator advantage.groupScale names: (r − mean)/(std + eps) with std, r − mean with none. */
export function groupScaled(config: MarftConfig): 'group-relative' | 'group-relative-no-std' {
  return config.advantage.groupScale === 'std' ? 'group-relative' : 'group-relative-no-std';
}
