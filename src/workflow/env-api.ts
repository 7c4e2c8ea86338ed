// How an environment plugs into the Flex-MG runtime (spec sections 1 and 3).
//
// An environment is a single-use object for one episode of one problem (make G of them for G
// rollouts of the same problem). The runtime shows `firstMessage` to the agents, runs one
// environment step after every agent of the step has acted, and calls `finalScore` once the
// episode has ended. Everything that decides success (golden tests, the reference answer) stays
// inside the environment: only `feedback` / `feedbackFor` ever reach the agents' prompts.

/** One agent's action at a step, as the environment and the other agents see it. */
export interface AgentOutput {
  /** Agent name, unique in the workflow (e.g. "coder_2"). */
  agent: string;
  /** Role name (e.g. "Coder"); environments dispatch on it (see ROLES in builtin/roles.ts). */
  role: string;
  /** The decoded action text. */
  text: string;
}

export interface StepInput {
  /** Environment step t = 0 .. T-1. */
  t: number;
  /** Every agent's output at this step in execution order (a topological order of D). */
  outputs: AgentOutput[];
}

export interface StepOutcome {
  /** Team reward of this step: the turn's own result (spec section 3; the trainer decides which team reward each turn receives, src/train/batch.ts). */
  teamReward: number;
  /** The environment's termination signal (e.g. the two roles agree). */
  done: boolean;
  /** Shown to every agent at the next step (e.g. the program's output on the Tester's case). */
  feedback?: string;
  /** Shown to one agent at the next step, replacing `feedback` for it. */
  feedbackFor?: Record<string, string>;
  /** Role-local rewards by agent name (spec section 3), recorded on each action (ActionRecord.localReward); the trainer weighs them in (reward.localWeight). */
  perAgentReward?: Record<string, number>;
}

export interface TaskEnv {
  readonly problemId: string;
  /** The problem statement: the first user message every agent sees. */
  readonly firstMessage: string;
  /** Runs the environment transition for one step; may run programs (hence async). */
  onStep(step: StepInput): StepOutcome | Promise<StepOutcome>;
  /** The episode's final outcome (Episode.outcome: what evaluation scores, and the team reward of every turn under reward.team outcome), called once after the last step. */
  finalScore(): { score: number; info: Record<string, unknown> };
  /**
   * Domain equivalence of two outputs of the same agent (e.g. the same extracted maths answer), used
   * by self-consistency stopping (SA+MT). Without it, outputs are compared as trimmed text.
   */
  sameAnswer?(previous: string, current: string): boolean;
  /**
   * An independent copy of this environment in its current state (what it has seen, its last
   * answers, its step count), for branching samplers that continue several copies of one episode
   * (src/workflow/episode-state.ts). Mutating the copy must never change the original.
   */
  clone?(): TaskEnv;
}
