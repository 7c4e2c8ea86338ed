// The teacher playing every role of a workflow itself (the MAS-OPD paper's teacher row; the demo's
// and the arith-pair task's reference): each agent's context is the student's with the role line
// replaced by the role's condition, u ⊕ r_i, without verdicts (there is no verifier at test time),
// and every agent acts with the base model.
import { withPolicies, type Workflow } from '../workflow/index.ts';
import { conditionText, DEFAULT_ROLE_CONDITIONS } from './role-conditions.ts';
import { teacherMessages } from './teacher-context.ts';

export function teacherTeam(workflow: Workflow): Workflow {
  return {
    ...withPolicies(workflow, Object.fromEntries(workflow.agents.map((a) => [a.name, 'base']))),
    observe: (ctx) => teacherMessages(workflow.observe(ctx), conditionText(DEFAULT_ROLE_CONDITIONS, ctx.agent.role), null, 'first-sentence'),
  };
}
