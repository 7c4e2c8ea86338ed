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
  /**
   * Where rewards enter the credit chain (spec section 3):
   *   step-end   the team reward of a step once, at the step's last action; role-local rewards at
   *              their own agent's action (the Flex-MG: a joint chain must not add the team reward
   *              up once per agent);
   *   broadcast  every action receives the team reward plus its local reward (independent learners);
   *   outcome    the episode's outcome (its score) once, at its last action (trajectory level).
   */
  reward: 'step-end' | 'broadcast' | 'outcome';
  /** What the critic reads: the joint state of the step (centralised) or the acting agent's own prompt. */
  criticInput: 'joint' | 'own';
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
