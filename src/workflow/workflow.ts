// A Flex-MG workflow definition (spec section 1): agents, the dependency graph D, the turn
// protocol (horizon T and termination rule) and how each agent's observation is built.
import type { ChatMessage } from '../tokenizer/types.ts';
import type { Agent } from './agent.ts';
import type { AgentOutput, TaskEnv } from './env-api.ts';
import type { Edge } from './graph.ts';
import { WorkflowError } from './errors.ts';

/** One finished environment step as the agents may see it. */
export interface TurnRecord {
  t: number;
  /** Every agent's output at step t, in execution order (orchestrator excluded). */
  outputs: AgentOutput[];
  /** The environment's shared feedback after step t. */
  feedback?: string;
  /** Per-agent feedback after step t. */
  feedbackFor?: Record<string, string>;
}

export interface ObservationContext {
  agent: Agent;
  /** Environment step. */
  t: number;
  /** The problem (the environment's first message). */
  problem: string;
  /** This step's outputs of the agent's direct predecessors in D, in execution order. */
  visible: AgentOutput[];
  /** Earlier steps, oldest first. */
  history: TurnRecord[];
  /** The agent's position in this step's execution order (0 = acts first). */
  position: number;
  /** All agents of the workflow. */
  agents: readonly Agent[];
}

export type ObservationBuilder = (ctx: ObservationContext) => ChatMessage[];

export interface RouterContext {
  t: number;
  problem: string;
  history: TurnRecord[];
}

/** An orchestrator agent: acts first at every step, and its output sets D for that step. */
export interface Orchestrator {
  agent: Agent;
  observe(ctx: RouterContext & { agents: readonly Agent[] }): ChatMessage[];
  /** D parsed from the orchestrator's text, or null when it is malformed (the default graph is used). */
  parse(text: string, agents: readonly Agent[]): Edge[] | null;
}

export interface StopContext {
  t: number;
  outputs: AgentOutput[];
  history: TurnRecord[];
  env: TaskEnv;
}

export interface Workflow {
  name: string;
  agents: Agent[];
  /** The default D. */
  graph: Edge[];
  /** Horizon T: at most this many environment steps (1 = one pass). */
  horizon: number;
  observe: ObservationBuilder;
  /** Replaces D at each step (a router function); mutually exclusive with orchestrator. */
  router?: (ctx: RouterContext) => Edge[];
  orchestrator?: Orchestrator;
  /**
   * Termination rule besides the environment's `done` and the horizon (e.g. SA+MT's
   * self-consistency). Checked after the environment step.
   */
  stop?: (ctx: StopContext) => boolean;
}

/**
 * The same workflow with other adapters acting for its agents (e.g. the trainer's per-agent
 * policies, or "base" for every agent when evaluating the untrained system). Agents absent from
 * `policies` keep theirs; names that are not agents of the workflow are an error.
 */
export function withPolicies(workflow: Workflow, policies: Readonly<Record<string, string>>): Workflow {
  const names = new Set(workflow.agents.map((a) => a.name));
  if (workflow.orchestrator) names.add(workflow.orchestrator.agent.name);
  for (const name of Object.keys(policies)) {
    if (!names.has(name)) throw new WorkflowError(`policies: '${name}' is not an agent of workflow '${workflow.name}' (agents: ${[...names].join(', ')})`);
  }
  const swap = (a: Agent): Agent => (policies[a.name] === undefined ? a : { ...a, policy: policies[a.name]! });
  const out: Workflow = { ...workflow, agents: workflow.agents.map(swap) };
  if (workflow.orchestrator) out.orchestrator = { ...workflow.orchestrator, agent: swap(workflow.orchestrator.agent) };
  return out;
}
