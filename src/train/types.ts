// The contracts of the training pipeline, in one leaf that every part of it imports and that imports
// nothing of the pipeline itself (so no part of src/train/ needs another part to name a type):
//
//   rollout      Task.rollout (./task.ts), or the plan's own `rollout` hook
//     → records  ActionRecord (src/workflow/trajectory.ts): one sampled turn; TrainAction (below):
//                that record's place in the step's batch (./batch.ts flattens episodes into them)
//     → rewards  placed once per the plan's `reward` (./batch.ts), scaled when the plan says so
//     → credit   the plan's AdvantageEstimator (./credit/: GAE, group-relative, return-to-go; MAS-OPD's
//                teacher-scored estimator, src/opd/teacher-estimator.ts) fills advantages and returns
//     → losses   the plan's PolicyObjective (./losses/) on the units the plan's aggregation weighs
//     → update   ./update/: one optimiser step per adapter per minibatch; the critic's update
//
// The loop (./loop.ts) runs every plan the same way and knows no algorithm by name: an algorithm
// (src/algorithms/) is a plan built from a configuration, plus the hooks it needs.
import type { MarftConfig } from '../config/schema.ts';
import type { Engine, SamplingEngine } from '../engine/types.ts';
import type { StepMetrics } from '../runs/metrics-log.ts';
import type { ActionRecord, Episode, JointSampleRef } from '../workflow/trajectory.ts';
import type { RewardScheme, RolloutRequest, Task } from './task.ts';

export type CreditLevel = 'action' | 'token';

/**
 * A sampled turn (its ActionRecord) in a step's training batch: who trains on it, the sequence the
 * policy scores, the reward placed on it, and its credit. One per kept action of the step's episodes.
 */
export interface TrainAction {
  /** The sampled turn itself, as the rollout recorded it. */
  readonly record: ActionRecord;
  /** Index of its episode in the step's episode list. */
  episode: number;
  /** Turn (environment step) t. */
  t: number;
  agentIndex: number;
  agent: string;
  /** The agent's role (the workflow's role type; the agent's name where the task has none). */
  role: string;
  /** Adapter trained on this action; null for an agent outside the plan (acting with a frozen policy). */
  policy: string | null;
  /** Critic valuing this action's state; null when the plan has no critic. */
  critic: string | null;
  /** The episode's sampling group (Episode.group), null when the task gives none. */
  group: string | null;
  /** MAGRPO's tree of joint samples: the joint sample this action belongs to (ActionRecord.joint); null otherwise. */
  joint: JointSampleRef | null;
  /** prompt ++ action tokens; the action's log-probs start at scoreFrom. */
  tokens: number[];
  /** What the critic reads before the action: the joint state (centralised critic) or the agent's own prompt. */
  criticTokens: number[];
  scoreFrom: number;
  /** Action token count L. */
  length: number;
  text: string;
  /** The rollout's log-probs of the action tokens (ActionRecord.behaviourLogprobs as float32). */
  behaviourLogprobs_K: Float32Array;
  /**
   * What an independent learner of this agent receives for the action (α·team share + w·local,
   * ./rewards.ts; a scheme's own reward under the plan's `local` placement), before scaling: the
   * metric reward/<agent>.
   */
  learnerReward: number;
  /** The reward the credit chain uses (placed per the plan's reward mode by ./batch.ts, then scaled). */
  reward: number;
  /** Action normalisation factor (1, 1/L or 1/words). */
  scale: number;
  /** Old critic values: [V(prompt)] at the action level, V before each action token at the token level; empty without a critic. */
  values_K: Float32Array;
  /** Advantages and returns per unit: length 1 (action level) or L (token level). */
  advantages_K: Float64Array;
  returns_K: Float64Array;
  /** Frozen-reference log-probs of the action tokens (when the KL term is on). */
  ref_K?: Float32Array;
  /** Proximal (recomputed old-policy) log-probs of the action tokens. */
  proximal_K?: Float32Array;
  /** A teacher-scored estimator's per-token gap, teacher − student log-prob (MAS-OPD's A_OPD), kept for samples and metrics. */
  teacherGap_K?: Float64Array;
}

/** What an estimator may read besides the batch. */
export interface CreditContext {
  episodes: Episode[];
  plan: AlgorithmPlan;
  config: MarftConfig;
  /** The task, for estimators that score combinations of actions (Task.jointRewards). */
  task?: Pick<Task, 'jointRewards'>;
  /** The run's frozen teacher (teacher-scored estimators: MAS-OPD); absent in runs without one. */
  teacher?: SamplingEngine;
}

/**
 * An advantage estimator: given the step's training actions (rewards placed per the plan, old values
 * filled when the plan has a critic), fill every action's advantages_K and returns_K with one entry
 * per objective unit (1 at the action level, L at the token level). An estimator that scores with
 * an engine (MAS-OPD's teacher) is asynchronous and may return metrics of its own.
 */
export interface AdvantageEstimator {
  readonly summary: string;
  /** Reads the critic's old values (values_K): the plan must have a critic, and only then. */
  readonly needsCritic: boolean;
  /** Compares episodes within their EpisodeGroup: the plan must sample groups. */
  readonly needsGroups: boolean;
  /** Objective levels it fills units for. */
  readonly levels: readonly CreditLevel[];
  assign(actions: TrainAction[], context: CreditContext): void | Promise<StepMetrics | void>;
}

export interface PolicyObjectiveInput {
  logprobs_N: ArrayLike<number>;
  /** The old policy's log-probs (recomputed when actor.recomputeLogprobs, else the sampler's). */
  proximalLogprobs_N: ArrayLike<number>;
  /** The sampler's log-probs. */
  behaviourLogprobs_N: ArrayLike<number>;
  /**
   * Another engine sampled the units (sampler.engine: vllm), so the behaviour log-probs are not the
   * trainer's: an objective without its own behaviour term corrects for the mismatch.
   */
  samplerSeparate: boolean;
  /**
   * This pass updates the parameters that sampled the units (the step's first minibatch, the trainer
   * its own sampler): the ratio of the current policy to the behaviour policy is 1 by definition.
   */
  onPolicy?: boolean;
  advantages_N: ArrayLike<number>;
  weights_N: ArrayLike<number>;
  actor: MarftConfig['actor'];
  /** The plan's dual clip (PPO-clip only; AlgorithmPlan.dualClip); absent: off. */
  dualClip?: number;
}

export interface PolicyObjectiveOutput {
  loss: number;
  dLogprobs_N: Float64Array;
  clipFraction: number;
  meanImportanceWeight: number;
  cappedFraction: number;
}

/**
 * A policy objective: the units of one micro-batch (action or token log-probs under the policy being
 * trained, the proximal and behaviour log-probs, advantages, aggregation weights) → the loss, its
 * gradient with respect to the log-probs, and the statistics the metrics report.
 */
export interface PolicyObjective {
  readonly summary: string;
  /**
   * Reads proximal log-probs (the trainer's old log-probs: a separate recomputation pass when
   * several passes update the policy), given whether the sampler is a separate engine.
   */
  needsProximal(samplerSeparate: boolean): boolean;
  loss(input: PolicyObjectiveInput): PolicyObjectiveOutput;
}

/**
 * How an adapter's loss averages over the units of a minibatch (./losses/aggregation.ts):
 *   unit-mean                        the mean over the adapter's own units in the minibatch (its
 *                                    actions at the action level, its tokens at the token level):
 *                                    the RL algorithms'
 *   role-trajectory-turn-token-mean  MAS-OPD's Eq. 13: the mean over each response's tokens, then
 *                                    over the role's turns within each trajectory, then over the
 *                                    trajectories where the role acted, then over roles
 *   role-turn-token-mean             Eq. 13 with the turns of a role pooled across the minibatch's
 *                                    trajectories (opd.turnWeighting: pooled; the earlier step's)
 */
export type Aggregation = 'unit-mean' | 'role-trajectory-turn-token-mean' | 'role-turn-token-mean';

/**
 * How a step's batch splits into minibatches for the policy update:
 *   units     `count` minibatches dealt from a seeded shuffle of the actions (actor.minibatches),
 *             repeated `epochs` times (actor.epochs)
 *   episodes  minibatches of `size` whole episodes from a seeded shuffle of the episodes (MAS-OPD's
 *             opd.minibatchSize), one epoch
 */
export type UpdateSplit = { by: 'units'; count: number; epochs: number } | { by: 'episodes'; size: number };

export interface AlgorithmPlan {
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
  /** Role of each agent where the algorithm reads roles (MAS-OPD: the workflow's role types); default: the agent's name. */
  roles?: Record<string, string>;
  /** Critic of each agent (the same centralised critic for all, or one per agent); null: no critic is created, scored or trained. */
  critics: Record<string, string> | null;
  /** joint: one credit chain per episode across agents then steps (MARFT); per-agent: one chain per agent (IPPO). */
  chain: 'joint' | 'per-agent';
  /**
   * Where rewards enter the credit chain (spec section 3), weighted by the run's reward settings
   * (./rewards.ts, placed once by ./batch.ts):
   *   step-end   the team reward of a turn once, at the turn's last action; role-local rewards at
   *              their own agent's action (the Flex-MG: a joint chain must not add the team reward
   *              up once per agent);
   *   broadcast  every action receives its share of the team reward plus its local reward
   *              (independent learners);
   *   outcome    α times the episode's outcome (Episode.outcome) once, at its last action (trajectory level);
   *   local      every action its own local reward alone, unweighted (a reward scheme's: CURE's);
   *   none       no reward is placed: the estimator reads none (MAS-OPD's teacher).
   */
  reward: 'step-end' | 'broadcast' | 'outcome' | 'local' | 'none';
  /** What the critic reads: the joint state of the step (centralised) or the acting agent's own prompt. */
  criticInput: 'joint' | 'own';
  /** The advantage estimator: a name of ./credit/index.ts's registry, or an estimator the algorithm brings. */
  advantage: AdvantageEstimatorRef;
  /** The policy objective, by name (./losses/policy-objectives.ts). */
  policyLoss: PolicyLossRef;
  /** How each adapter's loss averages over its units (default unit-mean). */
  aggregation?: Aggregation;
  /** How the batch splits into minibatches (default: actor.minibatches × actor.epochs, by units). */
  split?: UpdateSplit;
  /** Divide credited rewards by the running return deviation (advantage.normaliseRewards for MARFT and IPPO). */
  scaleRewards: boolean;
  /** Whiten the advantages over the units being updated (advantage.normaliseAdvantages for MARFT and IPPO). */
  whitenAdvantages: boolean;
  /** Add the KL penalty against the frozen base when actor.klCoef > 0 (false: never, whatever klCoef says). */
  kl: boolean;
  /**
   * Leave the actions of groups whose rewards are all equal (advantage 0) out of the policy update
   * (AT-GRPO's optional filter; CURE always). The loop finds the groups by the role-turn key, so a
   * plan that drops them must group by role-turn (checked by src/algorithms/check.ts).
   */
  dropFlatGroups?: boolean;
  /**
   * What the group-relative estimators compare a response with (./credit/group-relative.ts):
   * role: the same role's responses to the same problem, every turn together (MAS+GRPO);
   * role-turn (default): only those of the same turn (AT-GRPO's (problem, turn, agent)).
   */
  groupKey?: 'role' | 'role-turn';
  /** The group standard deviation of the group-relative estimator: population (default) or unbiased (n − 1: AT-GRPO's). */
  groupDeviation?: 'population' | 'unbiased';
  /**
   * PPO's dual clip c (Ye et al. 2020, as verl applies it): for a negative advantage the unit's loss
   * is capped at −c·A, so a large ratio on a bad action cannot grow it without bound; absent: off.
   */
  dualClip?: number;
  /**
   * MAGRPO's tree of joint samples (src/workflow/joint-tree-sampling.ts) with group sampling: the
   * next turn grows from every joint sample of a node (all) or the best (best); asked of a task
   * that offers it (Task.jointTreeSampling), else the group's episodes are independent.
   */
  jointTree?: 'all' | 'best';
  /** The task replaces its rewards by this scheme's (cure: CURE's program and unit-test rewards); the task must offer it (Task.rewardSchemes). */
  rewards?: RewardScheme;
  /**
   * The algorithm's own rollout in place of Task.rollout (MAS-OPD: episodes that keep every action's
   * chat messages and each turn's record, which its teacher contexts and PAC verdicts are built from).
   */
  rollout?: (engine: Engine, request: RolloutRequest) => Promise<Episode[]>;
  /** Checks that need the run's engines (before anything is written into the run folder); may throw a ConfigError. */
  prepare?: (run: RunContext) => Promise<void>;
}

/** An estimator named in ./credit/index.ts, or one an algorithm brings (MAS-OPD's). */
export type AdvantageEstimatorRef = string | (AdvantageEstimator & { readonly name: string });
/** An objective named in ./losses/policy-objectives.ts. */
export type PolicyLossRef = string;

/** Everything a run's steps share. */
export interface RunContext {
  engine: Engine;
  task: Task;
  config: MarftConfig;
  plan: AlgorithmPlan;
  /** The frozen teacher of a distillation run (algorithm: mas-opd); absent otherwise. */
  teacher?: SamplingEngine;
  notice: (message: string) => void;
}

/** An algorithm: its name, a one-line summary, and its plan for a task's agents under a configuration. */
export interface Algorithm {
  readonly name: string;
  readonly summary: string;
  /** `task`, when given, is the task the plan is for (MAS-OPD reads its agents' roles from it). */
  plan(agents: readonly string[], config: MarftConfig, task?: Task): AlgorithmPlan;
}
