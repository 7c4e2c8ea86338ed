// The demo's Flex-MG workflow: Duo = Planner → Solver (spec section 2), one environment step,
// D = {Planner → Solver}. The observation builder renders duo-prompts.ts's messages, the same
// functions the pretraining corpus is rendered with, so the agents are prompted with exactly the
// token sequences the model was pretrained on.
import { BASE_POLICY, sequentialGraph, type Agent, type ObservationContext, type Workflow } from '../../workflow/index.ts';
import { PLANNER, SOLVER, plannerMessages, solverMessages } from './duo-prompts.ts';

export const DUO_AGENT_NAMES = ['planner', 'solver'] as const;
export type DuoAgentName = (typeof DUO_AGENT_NAMES)[number];

/** Longest reply of each agent in tokens: "-8*9=-72" plus <|end|> fits with room to spare. */
export const MAX_PLAN_TOKENS = 12;
export const MAX_SOLUTION_TOKENS = 16;

export function duoObservation(ctx: ObservationContext) {
  if (ctx.position === 0) return plannerMessages(ctx.problem);
  const plan = ctx.visible.find((o) => o.agent === 'planner');
  return solverMessages(ctx.problem, plan?.text ?? '');
}

/** policies: adapter name per agent; an agent missing from it acts with the frozen base. */
export function duoWorkflow(policies: Partial<Record<DuoAgentName, string>>): Workflow {
  const agents: Agent[] = [
    { name: 'planner', role: PLANNER, systemPrompt: PLANNER, roleDescription: 'Reduces the operator that comes first and writes its value.', policy: policies.planner ?? BASE_POLICY, sampleParams: { maxNewTokens: MAX_PLAN_TOKENS } },
    { name: 'solver', role: SOLVER, systemPrompt: SOLVER, roleDescription: "Substitutes the Planner's value and writes the final answer.", policy: policies.solver ?? BASE_POLICY, sampleParams: { maxNewTokens: MAX_SOLUTION_TOKENS } },
  ];
  return { name: 'arith-duo', agents, graph: sequentialGraph(agents.map((a) => a.name)), horizon: 1, observe: duoObservation };
}
