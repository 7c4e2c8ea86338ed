// The built-in Flex-MG workflows (src/workflow/builtin) by the names a task configuration uses.
//
//   duo | trio | quad                 sequential pipelines (Planner → Solver [→ Reflector] [→ Verifier])
//   duo-anon | trio-anon | quad-anon  their anonymous, position-indexed variants
//   coder-tester                      Coder + Tester multi-turn pair (code datasets only)
//   reasoner-tooluser                 Reasoner + Tool-User multi-turn pair (maths datasets only)
//   sa-st | sa-mt                     single agent, one turn / multi-turn with self-consistency stop
//
// Agents keep the adapter names the builders give them (each agent's own name); the task swaps in
// the trainer's per-agent policies with withPolicies for every rollout.
import { multiTurnPair, sequentialPipeline, singleAgentMultiTurn, singleAgentSingleTurn, type Domain, type Workflow } from '../workflow/index.ts';
import { TaskOptionError } from './options.ts';

export const WORKFLOW_NAMES = ['duo', 'trio', 'quad', 'duo-anon', 'trio-anon', 'quad-anon', 'coder-tester', 'reasoner-tooluser', 'sa-st', 'sa-mt'] as const;
export type WorkflowName = (typeof WORKFLOW_NAMES)[number];

export interface WorkflowChoice {
  name: WorkflowName;
  /** Multi-turn pairs: agents per role (systems of 2n agents). */
  agentsPerRole: number;
  /** Multi-turn pairs and SA+MT: horizon T. */
  horizon: number;
}

/** Whose answer is the team's, per workflow (MathEnv/CodeEnv answerRole); undefined = the last agent's. */
export function defaultAnswerRole(name: WorkflowName): string | undefined {
  if (name === 'reasoner-tooluser') return 'Reasoner';
  if (name === 'coder-tester') return 'Coder';
  return undefined;
}

export function buildWorkflow(choice: WorkflowChoice, domain: Domain): Workflow {
  const { name } = choice;
  if (name === 'coder-tester' && domain !== 'code') throw new TaskOptionError(`task.options.workflow: 'coder-tester' needs a code dataset (this one is ${domain}); use 'reasoner-tooluser' for maths`);
  if (name === 'reasoner-tooluser' && domain !== 'math') throw new TaskOptionError(`task.options.workflow: 'reasoner-tooluser' needs a maths dataset (this one is ${domain}); use 'coder-tester' for code`);
  switch (name) {
    case 'duo':
    case 'trio':
    case 'quad':
      return sequentialPipeline({ domain, size: name, agentsPerRole: choice.agentsPerRole });
    case 'duo-anon':
    case 'trio-anon':
    case 'quad-anon':
      return sequentialPipeline({ domain, size: name.slice(0, -'-anon'.length) as 'duo' | 'trio' | 'quad', anonymous: true, agentsPerRole: choice.agentsPerRole });
    case 'coder-tester':
    case 'reasoner-tooluser':
      return multiTurnPair({ domain, agentsPerRole: choice.agentsPerRole, horizon: choice.horizon });
    case 'sa-st':
      return singleAgentSingleTurn({ domain });
    case 'sa-mt':
      return singleAgentMultiTurn({ domain, horizon: choice.horizon });
  }
}
