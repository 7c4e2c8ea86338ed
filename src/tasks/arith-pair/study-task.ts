// The MAS-OPD study's task: the demo's two-step arithmetic (`a o1 b o2 c`, src/tasks/arith-duo/task.ts) kept
// to the 2,088 problems whose two reduction orders give different values (elsewhere either order
// is right and there is nothing to learn), solved by the built-in Reasoner–Tool-User pair
// (src/workflow/builtin/pairs.ts: T = 4, both roles act each turn, stop on agreement) in the real
// maths environment (src/env/math-env.ts: the Tool-User's program runs in the sandbox, answers are
// compared by the maths verifier). The reference answer never reaches an agent.
//
// What the agents write:
//   Reasoner   "4*2=8\n3+8=11\n#### 11"            (the sub-expression it reduces first, the rest, the answer)
//   Tool-User  "```python\nprint(3+4*2)\n```"       (right order: the expression as given;
//              "```python\nprint((3+4)*2)\n```"      wrong order: parentheses forcing the other one)
import type { MathProblem } from '../../env/datasets/types.ts';
import { MathEnv, consistencyFeedback, type MathAgentAnswer } from '../../env/math-env.ts';
import type { ProgramRunner } from '../../env/program-runner.ts';
import { conditionText, DEFAULT_ROLE_CONDITIONS } from '../../opd/role-conditions.ts';
import { MATH_CONCLUSIONS, mathAttribution, renderVerdict } from '../../opd/pac.ts';
import { splitRoleLine } from '../../opd/teacher-context.ts';
import { reasonerToolUser, type Workflow } from '../../workflow/index.ts';
import { Rng } from '../../core/rng.ts';
import { type Problem, type Reduction, SPLIT_SEED, allProblems, correctReduction, partialResults, rewritten, rewrittenValue, stepOf } from '../arith-duo/task.ts';
import { fragments } from './phrase-tokenizer.ts';

export const HORIZON = 4;
/** Longest reply in tokens ("-8*9=-72\n..." and the program) with room to spare. */
export const MAX_REPLY_TOKENS = 32;

export function orderSensitive(p: Problem): boolean {
  const r = partialResults(p);
  return r[1] !== r[3];
}

export interface StudySplit {
  train: Problem[];
  heldOut: Problem[];
}

/** The split never depends on the run's seed. */
export function studySplit(heldOut: number): StudySplit {
  const all = new Rng(SPLIT_SEED).shuffle(allProblems().filter(orderSensitive));
  return { heldOut: all.slice(0, heldOut), train: all.slice(heldOut) };
}

export function finalValue(p: Problem, reduction: Reduction): number {
  return rewrittenValue(p, reduction, stepOf(p, reduction).value);
}

export function reasonerText(p: Problem, reduction: Reduction): string {
  const s = stepOf(p, reduction);
  const v = finalValue(p, reduction);
  return `${s.subExpression}=${s.value}\n${rewritten(p, reduction, s.value)}=${v}\n#### ${v}`;
}

export function toolUserText(p: Problem, reduction: Reduction): string {
  const expr = reduction === correctReduction(p) ? p.text : reduction === 0 ? `(${p.a}${p.op1}${p.b})${p.op2}${p.c}` : `${p.a}${p.op1}(${p.b}${p.op2}${p.c})`;
  return '```python\nprint(' + expr + ')\n```';
}

export function studyWorkflow(): Workflow {
  return reasonerToolUser({ horizon: HORIZON });
}

export function mathProblem(p: Problem): MathProblem {
  return { domain: 'math', id: p.text, dataset: 'arith-opd', question: p.text, answer: String(p.answer), meta: {} };
}

export function studyEnv(p: Problem, runProgram: ProgramRunner): MathEnv {
  return new MathEnv(mathProblem(p), { runProgram });
}

/** Every fixed text fragment the study's contexts contain: one token each in the study's tokenizer. */
export function studyPhrases(workflow: Workflow): string[] {
  const X = '\u0001';
  const out: string[] = ['```python\nprint(', ')\n```', '\n#### '];
  const [reasoner, toolUser] = workflow.agents;
  const answers = (r: string | null, t: string | null, status = 'ok'): MathAgentAnswer[] => [
    { agent: reasoner!.name, role: reasoner!.role, answer: r, correct: false },
    { agent: toolUser!.name, role: toolUser!.role, answer: t, program: { found: status !== 'no_program', status, ...(status === 'ok' ? {} : { error: X }) }, correct: false },
  ];
  const feedbacks = [consistencyFeedback(answers(X, X), true), consistencyFeedback(answers(X, X), false), consistencyFeedback(answers(null, null), false), consistencyFeedback(answers(X, null, 'no_program'), false), consistencyFeedback(answers(X, null, 'runtime_error'), false)];
  for (const f of feedbacks) out.push(...fragments(f));
  for (const agent of workflow.agents) {
    const { roleLine, rest } = splitRoleLine(agent.systemPrompt, 'first-sentence');
    out.push(roleLine, rest, `\n\n${rest}`);
    out.push(conditionText(DEFAULT_ROLE_CONDITIONS, agent.role));
    const history = [{ t: 0, outputs: workflow.agents.map((a) => ({ agent: a.name, role: a.role, text: X })), feedback: X }];
    const later = workflow.observe({ agent, t: 1, problem: X, visible: [], history, position: 0, agents: workflow.agents });
    for (const m of later) out.push(...fragments(m.content));
  }
  for (const c of MATH_CONCLUSIONS) {
    const r = c === 'BOTH_CONSISTENT' || c === 'COMPUTATION_INCONSISTENT';
    const t = c === 'BOTH_CONSISTENT' || c === 'DERIVATION_INCONSISTENT';
    const v = renderVerdict(mathAttribution([{ ...answers(X, X)[0]!, correct: r }, { agent: toolUser!.name, role: toolUser!.role, answer: X, programStatus: 'ok', correct: t }]));
    out.push(...fragments(`\n\n${v}`));
  }
  out.push('nothing (no program was given)', 'nothing (the program failed: ', 'no answer');
  return out;
}
