// Single-agent baselines (spec section 2): SA+ST (one response) and SA+MT (the same agent revises
// its own output until two consecutive outputs agree — env.sameAnswer, else trimmed text — or T).
// Maths uses the Reasoner's prompt (answer after ####), code the Coder's.
import type { ChatMessage } from '../../tokenizer/types.ts';
import type { SampleParams } from '../../engine/types.ts';
import { emptyGraph } from '../graph.ts';
import type { ObservationContext, StopContext, Workflow } from '../workflow.ts';
import { ROLES, type Domain } from './roles.ts';

export interface SingleAgentOptions {
  domain: Domain;
  /** Adapter name (default "solo"). */
  policy?: string;
  sampleParams?: Partial<SampleParams>;
}

const PROMPTS: Record<Domain, { role: string; description: string; system: string; artifact: string }> = {
  math: {
    role: ROLES.reasoner,
    description: 'Solves the problem by step-by-step reasoning and states the answer after ####.',
    system:
      'You are the Reasoner. Solve the problem by step-by-step mathematical reasoning. End with the final answer on its own line after the marker ####, for example: #### 42',
    artifact: 'solution',
  },
  code: {
    role: ROLES.coder,
    description: 'Writes a Python program that solves the problem.',
    system:
      'You are the Coder. Write a complete Python program that solves the problem, reading from standard input and printing to standard output. Give the whole program in one ```python code block.',
    artifact: 'program',
  },
};

function soloWorkflow(options: SingleAgentOptions, horizon: number): Workflow {
  const p = PROMPTS[options.domain];
  const agent = {
    name: options.domain === 'math' ? 'reasoner' : 'coder',
    role: p.role,
    roleDescription: p.description,
    systemPrompt: p.system,
    policy: options.policy ?? 'solo',
    ...(options.sampleParams ? { sampleParams: options.sampleParams } : {}),
  };
  const observe = (ctx: ObservationContext): ChatMessage[] => {
    const last = ctx.history[ctx.history.length - 1];
    if (!last) return [{ role: 'system', content: p.system }, { role: 'user', content: ctx.problem }];
    const own = last.outputs.find((o) => o.agent === agent.name)?.text ?? '';
    const feedback = last.feedbackFor?.[agent.name] ?? last.feedback;
    const parts = [`Problem:\n${ctx.problem}`, `Your ${p.artifact} from the previous turn:\n${own}`];
    if (feedback !== undefined) parts.push(`Result of the environment's check:\n${feedback}`);
    parts.push(
      `Check your ${p.artifact} again and say briefly where it could be wrong. Then either revise it or keep it unchanged if you ` +
        'believe it is correct, and give the final version in the required format.',
    );
    return [{ role: 'system', content: p.system }, { role: 'user', content: parts.join('\n\n') }];
  };
  const workflow: Workflow = { name: `sa-${horizon === 1 ? 'st' : 'mt'}-${options.domain}`, agents: [agent], graph: emptyGraph(), horizon, observe };
  if (horizon > 1) workflow.stop = selfConsistent;
  return workflow;
}

/** SA+MT's stop rule: every agent's output equals (per env.sameAnswer) its output of the previous turn. */
export function selfConsistent(ctx: StopContext): boolean {
  const previous = ctx.history[ctx.history.length - 1];
  if (!previous) return false;
  const same = (a: string, b: string) => (ctx.env.sameAnswer ? ctx.env.sameAnswer(a, b) : a.trim() === b.trim());
  return ctx.outputs.every((o) => {
    const before = previous.outputs.find((p) => p.agent === o.agent);
    return before !== undefined && same(before.text, o.text);
  });
}

export const singleAgentSingleTurn = (options: SingleAgentOptions): Workflow => soloWorkflow(options, 1);
export const singleAgentMultiTurn = (options: SingleAgentOptions & { horizon?: number }): Workflow => soloWorkflow(options, options.horizon ?? 4);
