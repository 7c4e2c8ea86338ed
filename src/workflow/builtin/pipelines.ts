// MARFT's sequential pipelines (spec section 2): Duo = Planner → Solver, Trio = Planner → Solver →
// Verifier, Quad = Planner → Solver → Reflector → Verifier, for maths and code, with prescribed
// roles or anonymous position-indexed ones. One pass (T = 1); every agent sees the whole
// conversation so far (D: every earlier agent → every later agent); the last agent answers.
//
// Observation of the m-th agent (system prompt, problem, then the earlier agents' outputs):
//   system: own system prompt
//   user: problem
//   assistant: output of agent 1
//   user: Now it is {role 2}'s turn. {description 2}      (before every non-initial agent)
//   assistant: output of agent 2
//   ...
//   user: Now it is {role m}'s turn. {description m}       (when m is not the initial agent)
//
// Several agents per role (agentsPerRole n > 1): every stage (Planner, Solver, ...) has n agents,
// named planner_1..planner_n (anonymous: agent_1_1..agent_1_n, ...). The agents of a stage act in
// parallel (one sampling round: no edge inside a stage), and every agent of a later stage sees
// every agent of every earlier stage (D: each earlier stage's agents → each later stage's agents),
// in stage order, then index order; an agent is labelled "{role} #{i}" in the turn messages
// ("Now it is Planner #2's turn."). The team's answer is the last agent's (the last stage's n-th).
import type { ChatMessage } from '../../tokenizer/types.ts';
import type { SampleParams } from '../../engine/types.ts';
import type { Agent } from '../agent.ts';
import { sequentialGraph, type Edge } from '../graph.ts';
import type { ObservationContext, Workflow } from '../workflow.ts';
import { ROLES, ordinal, policyFor, turnMessage, type Domain, type PolicyChoice } from './roles.ts';

export type PipelineSize = 'duo' | 'trio' | 'quad';

/** MARFT's per-agent generation caps in new tokens (spec section 4, App. B); pass as sampleParams.maxNewTokens. */
export const MARFT_GENERATION_CAPS: Record<Domain, Record<PipelineSize, number>> = {
  math: { duo: 12288, trio: 8192, quad: 6144 },
  code: { duo: 13824, trio: 9216, quad: 6912 },
};

/** MARFT's input caps in tokens (spec section 4); pass as RolloutOptions.maxPromptTokens. */
export const MARFT_INPUT_CAPS: Record<Domain, number> = { math: 1024, code: 4096 };

export interface PipelineOptions {
  domain: Domain;
  size: PipelineSize;
  /** Position-indexed generic roles instead of Planner/Solver/... (spec: "anonymous" variants). */
  anonymous?: boolean;
  /** See PolicyChoice: one shared adapter name, one per agent, or (default) one named after each agent. */
  policies?: PolicyChoice;
  /** Sampling overrides for every agent (e.g. the spec's per-agent generation caps). */
  sampleParams?: Partial<SampleParams>;
  /** Agents per stage (default 1): see the file comment. */
  agentsPerRole?: number;
}

interface RoleSpec {
  key: keyof typeof ROLES;
  description: string;
  duty: string;
}

const ANSWER_FORMAT: Record<Domain, string> = {
  math: 'Write the final answer as \\boxed{answer}.',
  code: 'Write the final program as one complete Python solution in a single ```python code block.',
};

const TASK: Record<Domain, string> = { math: 'solves a maths problem', code: 'writes a Python program for a programming problem' };

function roleSpecs(domain: Domain, size: PipelineSize): RoleSpec[] {
  const math = domain === 'math';
  const planner: RoleSpec = {
    key: 'planner',
    description: math ? 'Analyzes the problem and outlines a step-by-step plan.' : 'Analyzes the problem and outlines the algorithm to implement.',
    duty: math
      ? 'Read the problem and write a short, numbered plan for solving it. Do not carry out the calculations and do not give a final answer; the Solver will follow your plan.'
      : 'Read the problem and describe the algorithm, the data structures, the edge cases and how input and output are handled. Do not write code; the Solver will implement your plan.',
  };
  const solver: RoleSpec = {
    key: 'solver',
    description: math ? 'Executes the plan and produces the final answer.' : 'Implements the plan as Python code.',
    duty: math
      ? `Follow the Planner's plan, show your working step by step, and produce the final answer. ${ANSWER_FORMAT.math}`
      : `Implement the Planner's plan as a complete, runnable Python solution. ${ANSWER_FORMAT.code}`,
  };
  const trioVerifier: RoleSpec = {
    key: 'verifier',
    description: math ? "Verifies or corrects the solver's answer." : 'Verifies and finalizes the code.',
    duty: math
      ? `Check the Solver's working and answer. Keep the answer if it is right, correct it if it is wrong. ${ANSWER_FORMAT.math}`
      : `Check the Solver's code against the problem, fix any bug you find, and give the final code. ${ANSWER_FORMAT.code}`,
  };
  const reflector: RoleSpec = {
    key: 'reflector',
    description: math ? 'Reviews the solution and identifies errors or gaps.' : 'Reflects on the code and identifies issues.',
    duty: math
      ? 'Review the Solver\'s solution step by step and point out any error, gap or unjustified step. Do not give a final answer yourself.'
      : "Review the Solver's code and point out bugs, unhandled cases and mismatches with the problem statement. Do not rewrite the code yourself.",
  };
  const quadVerifier: RoleSpec = {
    key: 'verifier',
    description: math ? "Verifies or corrects the solver's answer after reflection." : 'Produces the final verified code.',
    duty: math
      ? `Taking the Reflector's review into account, verify the Solver's answer or correct it. ${ANSWER_FORMAT.math}`
      : `Taking the Reflector's review into account, fix the Solver's code where needed and give the final verified code. ${ANSWER_FORMAT.code}`,
  };
  if (size === 'duo') return [planner, solver];
  if (size === 'trio') return [planner, solver, trioVerifier];
  return [planner, solver, reflector, quadVerifier];
}

/** Agents per stage, validated. */
function perRole(options: PipelineOptions): number {
  const n = options.agentsPerRole ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new Error(`agentsPerRole must be a positive integer, got ${n}`);
  return n;
}

/** The agents of a pipeline, in pipeline order (stage by stage, then by index within a stage). */
export function pipelineAgents(options: PipelineOptions): Agent[] {
  const specs = roleSpecs(options.domain, options.size);
  const n = specs.length;
  const per = perRole(options);
  const agents: Agent[] = [];
  specs.forEach((spec, k) => {
    for (let i = 1; i <= per; i++) {
      const base = options.anonymous ? `agent_${k + 1}` : spec.key;
      const name = per === 1 ? base : `${base}_${i}`;
      const common = { policy: policyFor(options.policies, name, agents.length, n * per), ...(options.sampleParams ? { sampleParams: options.sampleParams } : {}) };
      // With several agents per stage, each is told that its peers work in parallel.
      const peers = (role: string) => (per === 1 ? '' : ` You are one of ${per} agents in this role (${role}), working independently in parallel; the later agents see all of you.`);
      if (options.anonymous) {
        agents.push({
          name,
          role: `Agent ${k + 1}`,
          roleDescription: `The ${ordinal(k)} agent in the sequential pipeline.`,
          systemPrompt:
            `You are the ${ordinal(k)} of ${n} agents in a sequential pipeline that ${TASK[options.domain]}. ` +
            `You see the problem and the messages of the agents before you. ${ANSWER_FORMAT[options.domain]}${peers(`Agent ${k + 1}`)}`,
          ...common,
        });
        continue;
      }
      const role = ROLES[spec.key];
      agents.push({
        name,
        role,
        roleDescription: spec.description,
        systemPrompt: `You are the ${role} in a team of ${n} agents that ${TASK[options.domain]}. ${spec.duty}${peers(role)}`,
        ...common,
      });
    }
  });
  return agents;
}

/** Every agent of an earlier stage → every agent of a later stage (no edge inside a stage). */
export function stagedGraph(stages: readonly (readonly string[])[]): Edge[] {
  const edges: Edge[] = [];
  stages.forEach((later, j) => {
    for (const earlier of stages.slice(0, j)) for (const to of later) for (const from of earlier) edges.push([from, to]);
  });
  return edges;
}

/** "Planner" with one agent per role, "Planner #2" for planner_2 when the role has several. */
function label(agent: Agent, agents: readonly Agent[]): string {
  if (agents.filter((a) => a.role === agent.role).length < 2) return agent.role;
  const m = /_(\d+)$/.exec(agent.name);
  return m ? `${agent.role} #${m[1]}` : agent.role;
}

/** The conversation view of a sequential pipeline (see the file comment). */
export function conversationObservation(ctx: ObservationContext): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: 'system', content: ctx.agent.systemPrompt },
    { role: 'user', content: ctx.problem },
  ];
  const agentByName = new Map(ctx.agents.map((a) => [a.name, a]));
  ctx.visible.forEach((output, k) => {
    if (k > 0) {
      const agent = agentByName.get(output.agent)!;
      messages.push({ role: 'user', content: turnMessage(label(agent, ctx.agents), agent.roleDescription) });
    }
    messages.push({ role: 'assistant', content: output.text });
  });
  // Every agent but those of the first stage (the first agent's role) is told it is its turn.
  if (ctx.position > 0 && ctx.agent.role !== ctx.agents[0]!.role) messages.push({ role: 'user', content: turnMessage(label(ctx.agent, ctx.agents), ctx.agent.roleDescription) });
  return messages;
}

export function sequentialPipeline(options: PipelineOptions): Workflow {
  const agents = pipelineAgents(options);
  const per = perRole(options);
  const kind = `${options.anonymous ? 'anonymous-' : ''}${options.size}`;
  const stages = Array.from({ length: agents.length / per }, (_, k) => agents.slice(k * per, (k + 1) * per).map((a) => a.name));
  return {
    name: `${options.domain}-${kind}${per === 1 ? '' : `-x${per}`}`,
    agents,
    graph: per === 1 ? sequentialGraph(agents.map((a) => a.name)) : stagedGraph(stages),
    horizon: 1,
    observe: conversationObservation,
  };
}
