// An algorithm is a small composition: which adapters act for which agents, which critic values
// which agent's state, how credit flows (jointly across agents then steps, or per agent), at what
// level the PPO ratio is taken, and where the reward sits. The loop in src/rl/trainer.ts runs them all.
import type { MarftConfig } from '../config/schema.ts';

export type CreditLevel = 'action' | 'token';

export interface AlgorithmPlan {
  /** One PPO unit per agent action, or per generated token. */
  level: CreditLevel;
  /** Policy adapter of each agent. */
  policies: Record<string, string>;
  /** Critic of each agent (the same centralised critic for all, or one per agent). */
  critics: Record<string, string>;
  /** joint: the GAE chain runs across agents then environment steps (MARFT); per-agent: one chain per agent (IPPO). */
  chain: 'joint' | 'per-agent';
  /** Move each episode's rewards to its final action (trajectory-level outcome variant). */
  outcomeReward: boolean;
}

export interface Algorithm {
  readonly name: string;
  readonly summary: string;
  plan(agents: readonly string[], config: MarftConfig): AlgorithmPlan;
}

/** Adapter names: one shared policy, or one per agent. */
export function policyAdapters(agents: readonly string[], shared: boolean): Record<string, string> {
  return Object.fromEntries(agents.map((a) => [a, shared ? 'policy' : `policy-${a}`]));
}

export function centralisedCritic(agents: readonly string[]): Record<string, string> {
  return Object.fromEntries(agents.map((a) => [a, 'critic']));
}
