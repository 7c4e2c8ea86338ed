// What the trainer drives: a task owns its problems (train and held-out), its workflow of agents
// and its environment, and turns policies into Episodes (src/workflow/trajectory.ts). The Flex-MG
// runtime (src/workflow/rollout.ts) is one way to implement `rollout`; the toy tasks in
// src/tasks/toy/ implement it directly on token ids. Configurations name tasks through
// src/run/task-registry.ts; the trainer knows none by name.
import type { Engine, SamplingEngine } from '../engine/types.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import type { TurnScore } from '../workflow/joint-tree-sampling.ts';
import type { Episode } from '../workflow/trajectory.ts';

export interface Sampling {
  temperature: number;
  topP: number;
  topK: number;
  maxNewTokens: number;
}

export interface RolloutRequest {
  /** Training step; the task picks its problems for this step from (seed, step) only. */
  step: number;
  /** Sampling seed of this step (derived from the run seed and the step). */
  seed: number;
  batchSize: number;
  rolloutsPerPrompt: number;
  sampling: Sampling;
  /** Adapter name of each agent's policy (every agent of `agents`). */
  policies: Record<string, string>;
  /**
   * Tree sampling (algorithm at-grpo): one tree per problem with this many candidate actions per
   * agent per turn (Episode.candidates); only asked of a task whose treeSampling is true.
   */
  treeBranches?: number;
  /**
   * MAGRPO's tree of joint samples (src/workflow/joint-tree-sampling.ts): one tree per problem, G =
   * `branches` joint samples per node, the next turn growing from every joint sample (all) or the
   * best (best); only asked of a task whose jointTreeSampling is true. A task whose episodes last
   * one turn may answer with G independent episodes per problem (a one-turn tree is exactly that).
   */
  jointTree?: { branches: number; continuation: 'all' | 'best' };
  /**
   * How a tree ranks the copies of a turn (which copy is executed and continued), from the run's
   * reward settings (src/train/rewards.ts: α·team + localWeight·Σ local): required with treeBranches
   * or jointTree; the task passes it to the sampler and places no reward itself.
   */
  turnScore?: TurnScore;
  /** Rewards of another scheme than the task's own (algorithm cure); only asked of a task that lists it in rewardSchemes. */
  rewardScheme?: RewardScheme;
  /**
   * false: nothing reads ActionRecord.criticTokens (the plan has no critic), so a task may skip
   * rendering the centralised critic's input; absent or true: record it.
   */
  criticView?: boolean;
}

/** cure: CURE's rewards (programs: golden pass rate; unit tests: src/env/cure-rewards.ts), within each EpisodeGroup. */
export type RewardScheme = 'cure';

export interface EvalRequest {
  seed: number;
  sampling: Sampling;
  /** Held-out problems to score; 0 = all. */
  problems: number;
  /** Adapter name per agent, or "base" for the untrained system. */
  policies: Record<string, string>;
}

export interface Task {
  /** Agent names in execution order. */
  readonly agents: readonly string[];
  /** The task answers RolloutRequest.treeBranches with tree-sampled episodes. */
  readonly treeSampling?: boolean;
  /** The task answers RolloutRequest.jointTree with trees of joint samples. */
  readonly jointTreeSampling?: boolean;
  /** Reward schemes the task can answer RolloutRequest.rewardScheme with. */
  readonly rewardSchemes?: readonly RewardScheme[];
  /**
   * The raw rewards of an arbitrary combination of single-turn actions drawn for one problem
   * (advantage.jointActions: cross, MAGRPO): `episode` is any episode of the problem's group, and
   * `actions` holds one action per agent, in the task's agent order, possibly taken from different
   * episodes of the group. Returns what the environment would have reported had those actions been
   * played together: the turn's team reward and each action's role-local reward (in `actions`'
   * order); the trainer weighs them (src/train/rewards.ts). Offer it only where an action does not
   * depend on another agent's action of the same turn (no re-running is involved).
   */
  jointRewards?(episode: Episode, actions: readonly JointAction[]): JointRewards;
  rollout(engine: Engine, request: RolloutRequest): Promise<Episode[]>;
  /**
   * The exact value V^π of the state before each action of `episodes` (per episode, per entry of
   * its `actions`): the expected team outcome under the policies and sampling that drew them, given
   * what a critic reading `view` knows (joint: the joint state; own: the acting agent's prompt,
   * averaged over the states consistent with it). Offered by toy tasks whose states can be
   * enumerated and whose return is the team outcome alone (relay-game); the trainer logs the learned
   * critic's explained variance against it (explained_variance_exact) and, with advantage.baseline:
   * exact, credits with these values in place of the critic's (docs/training.md). null: the states
   * cannot be valued under this sampling (e.g. a truncated or greedy sampler).
   */
  exactValues?(engine: SamplingEngine, episodes: Episode[], request: ExactValuesRequest): Promise<number[][] | null>;
  /**
   * What records of the task's episodes show beyond token ids (marft eval --output, the samples
   * files; src/runs/episode-samples.ts): the tokenizer that turns an action's tokens into per-token
   * text, each agent's role, and a problem's text by its id. All optional: a task on raw token ids
   * (the toy games) has none of them.
   */
  readonly tokenizer?: Pick<Tokenizer, 'decode'>;
  readonly roles?: Readonly<Record<string, string>>;
  problemText?(problemId: string): string | undefined;
  /**
   * Episodes on held-out problems (never trained on); their `outcome` is what the evaluation scores. Every
   * call with the same `problems` returns the same problems in the same order, whatever the seed
   * (pass@k counts each problem's correct samples over the seeds).
   */
  evaluate(engine: SamplingEngine, request: EvalRequest): Promise<Episode[]>;
}

/** What Task.exactValues needs besides the episodes: who acted, how they sampled, what the critic sees. */
export interface ExactValuesRequest {
  policies: Record<string, string>;
  sampling: Sampling;
  view: 'joint' | 'own';
}

/** What Task.jointRewards reports for a combination: raw, as the environment would. */
export interface JointRewards {
  teamReward: number;
  /** Each action's role-local reward, in the order of the combination's actions. */
  localRewards: number[];
}

/** One agent's action in a combination scored by Task.jointRewards. */
export interface JointAction {
  agent: string;
  /** The action's tokens (without the prompt). */
  tokens: readonly number[];
  text: string;
}

/** Everything a configuration's `task` section becomes. */
export interface TaskBundle {
  task: Task;
  /** Vocabulary size, for engines the task does not build itself (the tabular engine). */
  vocabSize: number;
  /** Builds the task's own model when the configuration names none (model.path = ""). */
  buildEngine?: (seed: number) => Promise<Engine>;
  /**
   * Builds the task's own MAS-OPD teacher when the configuration names none (teacher.path "",
   * teacher.engine embedded): a task whose models are made on the spot (arith-pair) makes its
   * teacher the same way. The seed is the run's.
   */
  buildTeacher?: (seed: number) => Promise<Engine>;
}

/** What a task may know of the run besides its own options. */
export interface TaskContext {
  /** The configuration's model.path ("" when the task builds its own model). */
  modelPath: string;
}

export type TaskFactory = (options: Record<string, unknown>, context: TaskContext) => TaskBundle | Promise<TaskBundle>;
