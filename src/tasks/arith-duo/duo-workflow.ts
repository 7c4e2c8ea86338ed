// The demo's Flex-MG workflow: Duo = Planner → Solver (spec section 2), one environment step,
// D = {Planner → Solver}. The observation builder renders duo-prompts.ts's messages, the same
// functions the pretraining corpus is rendered with, so the agents are prompted with exactly the
// token sequences the model was pretrained on. With anonymous roles the agents keep their names
// (planner, solver: adapters, trainAgents) and only what they are shown changes.
import { BASE_POLICY, sequentialGraph, type Agent, type ObservationContext, type Workflow } from '../../workflow/index.ts';
import { type DuoRoles, type DuoRoleStyle, NAMED_ROLES, duoRoles, plannerMessages, solverMessages } from './duo-prompts.ts';

export const DUO_AGENT_NAMES = ['planner', 'solver'] as const;
export type DuoAgentName = (typeof DUO_AGENT_NAMES)[number];

/** Longest reply of each agent in tokens: "-8*9=-72" plus <|end|> fits with room to spare. */
export const MAX_PLAN_TOKENS = 12;
export const MAX_SOLUTION_TOKENS = 16;

export function duoObservation(roles: DuoRoles = NAMED_ROLES) {
  return (ctx: ObservationContext) => {
    if (ctx.position === 0) return plannerMessages(ctx.problem, roles);
    const plan = ctx.visible.find((o) => o.agent === 'planner');
    return solverMessages(ctx.problem, plan?.text ?? '', roles);
  };
}

const DESCRIPTIONS: Record<DuoRoleStyle, Record<DuoAgentName, string>> = {
  named: { planner: 'Reduces the operator that comes first and writes its value.', solver: "Substitutes the Planner's value and writes the final answer." },
  // The spec's anonymous description, by position.
  anonymous: { planner: 'The first agent in the sequential pipeline.', solver: 'The second agent in the sequential pipeline.' },
};

/** policies: adapter name per agent; an agent missing from it acts with the frozen base. */
export function duoWorkflow(policies: Partial<Record<DuoAgentName, string>>, style: DuoRoleStyle = 'named'): Workflow {
  const roles = duoRoles(style);
  const maxNewTokens: Record<DuoAgentName, number> = { planner: MAX_PLAN_TOKENS, solver: MAX_SOLUTION_TOKENS };
  const agents: Agent[] = DUO_AGENT_NAMES.map((name) => ({
    name,
    role: roles[name],
    systemPrompt: roles[name],
    roleDescription: DESCRIPTIONS[style][name],
    policy: policies[name] ?? BASE_POLICY,
    sampleParams: { maxNewTokens: maxNewTokens[name] },
  }));
  return { name: style === 'anonymous' ? 'arith-duo-anonymous' : 'arith-duo', agents, graph: sequentialGraph(agents.map((a) => a.name)), horizon: 1, observe: duoObservation(roles) };
}
