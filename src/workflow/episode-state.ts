// One episode's state in the Flex-MG runtime (./rollout.ts): its environment, every action and
// step recorded so far, the turn history the agents observe, and where the current step stands.
// copy() makes an independent copy of all of it, so that branching samplers (AT-GRPO's tree
// sampling, MAGRPO's tree of joint samples) can continue K copies of one state with different
// actions: the copies share nothing mutable (the environment is copied by TaskEnv.clone, the
// records by structured cloning).
import type { ChatMessage } from '../tokenizer/types.ts';
import type { AgentOutput, TaskEnv } from './env-api.ts';
import { WorkflowError } from './errors.ts';
import type { Edge } from './graph.ts';
import type { ActionRecord, StepRecord } from './trajectory.ts';
import type { TurnRecord } from './workflow.ts';

/** The dependency levels of one step and each agent's predecessors. */
export interface StepPlan {
  levels: string[][];
  preds: Map<string, Set<string>>;
  edges: Edge[];
}

export class EpisodeState {
  readonly actions: ActionRecord[] = [];
  readonly steps: StepRecord[] = [];
  readonly history: TurnRecord[] = [];
  readonly graphs: Edge[][] = [];
  readonly observations: ChatMessage[][] = [];
  orchestratorFallbacks = 0;
  t = 0;
  /** Waiting for the orchestrator's action (true) or running the levels of `plan`. */
  orchestrating = false;
  plan: StepPlan | undefined;
  level = 0;
  /** Outputs of the current step so far, in execution order. */
  outputs: AgentOutput[] = [];
  stepActionsFrom = 0;
  done = false;

  constructor(
    readonly env: TaskEnv,
    /** Index of the episode in the rollout's output. */
    readonly episode: number,
  ) {}

  /**
   * An independent copy of this state (at `episode`, default this one's index): the environment
   * through TaskEnv.clone (an environment without clone cannot be branched), everything else
   * deep-copied.
   */
  copy(episode = this.episode): EpisodeState {
    if (!this.env.clone) throw new WorkflowError(`the environment of problem '${this.env.problemId}' cannot be copied (it has no TaskEnv.clone), so its episode cannot branch`);
    const out = new EpisodeState(this.env.clone(), episode);
    out.actions.push(...structuredClone(this.actions));
    out.steps.push(...structuredClone(this.steps));
    out.history.push(...structuredClone(this.history));
    out.graphs.push(...structuredClone(this.graphs));
    out.observations.push(...structuredClone(this.observations));
    out.orchestratorFallbacks = this.orchestratorFallbacks;
    out.t = this.t;
    out.orchestrating = this.orchestrating;
    out.plan = structuredClone(this.plan);
    out.level = this.level;
    out.outputs = structuredClone(this.outputs);
    out.stepActionsFrom = this.stepActionsFrom;
    out.done = this.done;
    return out;
  }
}
