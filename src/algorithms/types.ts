// An algorithm is a small composition, chosen by name (src/algorithms/index.ts):
//   sampling     one episode per problem draw, or G episodes per problem forming a group (EpisodeGroup)
//   policies     which adapter acts for (and learns from the samples of) which agent
//   critics      which critic values which agent's state, or null: no critic at all
//   reward       where rewards enter the credit chain
//   advantage    the advantage estimator, by name (src/train/credit/index.ts)
//   policyLoss   the policy objective, by name (src/train/losses/policy-objectives.ts)
//   level        whether the objective's unit is an agent action or a generated token
// plus the knobs an algorithm's authors fix (batch whitening, running reward scale, KL term).
// The loop in src/train/loop.ts runs them all; docs/algorithms.md describes each algorithm.
import type { MarftConfig } from '../config/schema.ts';
import type { AdvantageEstimatorName } from '../train/credit/index.ts';
import type { PolicyLossName } from '../train/losses/policy-objectives.ts';
import type { RewardScheme, Task } from '../train/task.ts';

export type CreditLevel = 'action' | 'token';

export interface AlgorithmPlan {
  /**
   * Which step function of src/train/loop.ts trains it: 'rl' (absent: rollout, credit assignment,
   * policy objective, as every field below describes) or 'mas-opd' (distillation from a teacher,
   * src/opd/: only policies and critics (null) are read; the method's settings are the `opd` keys).
   */
  kind?: 'rl' | 'mas-opd';
  /**
   * independent: every episode stands alone (rollout.rolloutsPerPrompt may still repeat problems);
   * group: the rollout.rolloutsPerPrompt episodes of one problem in one step form an EpisodeGroup
   * (src/train/episode-groups.ts) that the estimator compares them within (at least 2 are required);
   * tree: one tree per problem (src/workflow/tree-sampling.ts): K = rollout.rolloutsPerPrompt
   * candidate actions per agent per turn from identical copies of the state, the best executed, all
   * trained on (Episode.candidates); the task must offer it (Task.treeSampling).
   */
  sampling: 'independent' | 'group' | 'tree';
  /** One objective unit per agent action, or per generated token. */
  level: CreditLevel;
  /** Policy adapter of each agent. */
  policies: Record<string, string>;
  /** Critic of each agent (the same centralised critic for all, or one per agent); null: no critic is created, scored or trained. */
  critics: Record<string, string> | null;
  /** joint: one credit chain per episode across agents then steps (MARFT); per-agent: one chain per agent (IPPO). */
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
  /** Advantage estimator (src/train/credit/index.ts). */
  advantage: AdvantageEstimatorName;
  /** Policy objective (src/train/losses/policy-objectives.ts). */
  policyLoss: PolicyLossName;
  /** Divide credited rewards by the running return deviation (advantage.normaliseRewards for MARFT and IPPO). */
  scaleRewards: boolean;
  /** Whiten the advantages over the units being updated (advantage.normaliseAdvantages for MARFT and IPPO). */
  whitenAdvantages: boolean;
  /** Add the KL penalty against the frozen base when actor.klCoef > 0 (false: never, whatever klCoef says). */
  kl: boolean;
  /** Leave the actions of groups whose rewards are all equal (advantage 0) out of the policy update (AT-GRPO's filter). */
  dropFlatGroups?: boolean;
  /**
   * MAGRPO's tree of joint samples (src/workflow/joint-tree-sampling.ts) with group sampling: the
   * next turn grows from every joint sample of a node (all) or the best (best); asked of a task
   * that offers it (Task.jointTreeSampling), else the group's episodes are independent.
   */
  jointTree?: 'all' | 'best';
  /** The task replaces its rewards by this scheme's (cure: CURE's program and unit-test rewards); the task must offer it (Task.rewardSchemes). */
  rewards?: RewardScheme;
}

export interface Algorithm {
  readonly name: string;
  readonly summary: string;
  /** `task`, when given, is the task the plan is for (MAS-OPD reads its agents' roles from it). */
  plan(agents: readonly string[], config: MarftConfig, task?: Task): AlgorithmPlan;
}

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
