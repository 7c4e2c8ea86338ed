// Typed rollout records (the contract between the Flex-MG runtime and every training algorithm).
//
// An episode is a sequence of environment steps t = 0..T-1; inside a step the agents act in a
// topological order of the dependency graph D (spec section 1). Each agent action keeps the exact
// token ids the policy saw and sampled (never re-tokenised), so the trainer can rebuild the scored
// sequence `promptTokens ++ actionTokens` and assign credit per action or per token.
import type { StopReason } from '../engine/types.ts';

export interface ActionRecord {
  /** Agent name, e.g. "planner". */
  agent: string;
  /** Position of this action inside its environment step (0 = first agent to act). */
  agentIndex: number;
  /** Environment step (turn) t. */
  step: number;
  /** Which policy acted: an adapter name, or "base" for the frozen base model. */
  policy: string;
  /** Exact observation token ids given to the policy (rendered chat, generation prompt included). */
  promptTokens: number[];
  /** Exact sampled token ids. */
  actionTokens: number[];
  /** Per action token: log-prob under the distribution it was drawn from (behaviour policy). */
  behaviourLogprobs: number[];
  stopReason: StopReason;
  /** Decoded action text, for environments and logs. */
  text: string;
  /**
   * The action's role-local reward as the environment reported it (StepOutcome.perAgentReward: the
   * role's weighted components, e.g. a Reasoner's 0.2·format + 0.8·correct, spec section 3), before
   * the run's reward.localWeight; 0 or absent when the environment gives none. How it is weighted
   * and where it enters the credit chain is the trainer's (src/train/batch.ts), never the rollout's.
   */
  localReward?: number;
  /**
   * What the centralised critic reads before this action (spec section 4): the joint state of the
   * step (the problem, every earlier turn with every agent's output and feedback) plus every action
   * taken so far in this step, in chain order, rendered the same way whoever acts. Absent when the
   * task does not provide it; the critic then reads promptTokens.
   */
  criticTokens?: number[];
  /**
   * Trees only (./joint-tree-sampling.ts, ./tree-sampling.ts): the action was played in copy k of
   * the K copies of its node's state, and whether that copy lies on the executed path (the best
   * copy of every node from the root).
   */
  branch?: { k: number; executed: boolean };
  /** Trees only: where this action sits in the tree (its node and joint sample). */
  joint?: JointSampleRef;
}

/**
 * One joint sample of a tree (./joint-tree-sampling.ts: MAGRPO's tree, and AT-GRPO's, which is its
 * best-continues form): sample `sample` of the G drawn at node `node` (a path of sample indices from
 * the root: '', '2', '2.0', ...), each a whole turn played by every agent from a copy of the node's
 * state.
 */
export interface JointSampleRef {
  node: string;
  sample: number;
  /** The node whose joint samples continue from this one's turn (null: the episode ended, or a leaf). */
  child: string | null;
  /** The team reward of this joint sample's turn, as its copy's environment reported it (its StepRecord.teamReward). */
  teamReward: number;
}

export interface StepRecord {
  t: number;
  /** Team reward of this environment step, as the environment reported it (spec section 3): the turn's own result. */
  teamReward: number;
  /** True when the episode ended after this step (termination rule or horizon). */
  done: boolean;
  /** Environment feedback shown to the agents at the next step, if any. */
  feedback?: string;
}

export interface Episode {
  problemId: string;
  /**
   * The sampling group: every episode the task drew for one problem in one training step carries
   * the same key (set by the task where it repeats the problem rolloutsPerPrompt times), so
   * group-relative estimators compare exactly those (src/train/episode-groups.ts). problemId alone
   * cannot serve: a step may draw the same problem twice, as two groups.
   */
  group?: string;
  /** Every agent action in execution order: step-major, then agentIndex. */
  actions: ActionRecord[];
  /**
   * Trees only (AT-GRPO's tree sampling, MAGRPO's tree of joint samples): every action of every
   * copy (each with `branch` and `joint`), node by node; `actions` is the path of the best copy of
   * every node from the root.
   */
  candidates?: ActionRecord[];
  steps: StepRecord[];
  /**
   * The episode's final outcome, as its environment reported it (TaskEnv.finalScore: maths 1 if the
   * final answer is correct, code the fraction of golden tests passed): the evaluation score, the
   * metric score_mean, and, under reward.team: outcome, the team reward of every turn.
   */
  outcome: number;
  /** Environment-specific details (extracted answer, test results, ...), JSON-serialisable. */
  info: Record<string, unknown>;
}

/** The scored sequence of an action: logprobs/values of the action tokens start at scoreFrom. */
export function actionSequence(a: ActionRecord): { tokens: number[]; scoreFrom: number } {
  return { tokens: [...a.promptTokens, ...a.actionTokens], scoreFrom: a.promptTokens.length };
}
