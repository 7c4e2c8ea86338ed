// Pretraining sequences for the study's two models, rendered through the real pair workflow's
// observation builder (so the models are trained on exactly the contexts they are later given):
//
// - Episodes are simulated with the imperfect behaviour: at turn 0 each role reduces the wrong
//   operator first with probability `wrongOrder`; at a later turn (after a disagreement) each role
//   keeps its previous answer or adopts its teammate's with probability ½ each, whoever was right.
//   The episode stops when the two values agree, or after T = 4 turns.
// - Students' sequences: the student's input and the imperfect reply it gave.
// - Teacher's sequences: the teacher's context for the same input (role line replaced by the
//   role condition; after a disagreement, with probability `verdictRate`, the PAC verdict on the
//   previous turn) followed by the correct reply. The histories are the imperfect ones, so the
//   teacher learns what follows a disagreement and a verdict line.
import type { ScoreRequest } from '../../engine/types.ts';
import { consistencyFeedback, type MathAgentAnswer } from '../../env/math-env.ts';
import { mathAttribution, renderVerdict } from '../../opd/pac.ts';
import { conditionText, DEFAULT_ROLE_CONDITIONS } from '../../opd/role-conditions.ts';
import { teacherMessages } from '../../opd/teacher-context.ts';
import type { ChatMessage, Tokenizer } from '../../tokenizer/types.ts';
import type { TurnRecord, Workflow } from '../../workflow/index.ts';
import type { Rng } from '../../core/rng.ts';
import { type Problem, type Reduction, correctReduction } from '../arith-duo/task.ts';
import { HORIZON, finalValue, reasonerText, toolUserText } from './study-task.ts';

export interface TranscriptNoise {
  wrongOrder: number;
  /** Probability that the teacher's context after a disagreement carries the PAC verdict. */
  verdictRate: number;
}

export const DEFAULT_NOISE: TranscriptNoise = { wrongOrder: 0.5, verdictRate: 0.5 };

interface Turn {
  /** Per agent: its input messages, the reply it gave, and the correct reply. */
  inputs: ChatMessage[][];
  given: string[];
  correct: string[];
  verdict: string | null;
}

/** One simulated episode: the inputs and replies of every turn. */
export function simulateEpisode(workflow: Workflow, p: Problem, rng: Rng, noise: TranscriptNoise): Turn[] {
  const right = correctReduction(p);
  const wrong = (1 - right) as Reduction;
  const texts = (r: Reduction, k: number) => (k === 0 ? reasonerText(p, r) : toolUserText(p, r));
  let reductions: Reduction[] = workflow.agents.map(() => (rng.next() < noise.wrongOrder ? wrong : right));
  const history: TurnRecord[] = [];
  const turns: Turn[] = [];
  let verdict: string | null = null;
  for (let t = 0; t < HORIZON; t++) {
    const inputs = workflow.agents.map((agent, position) => workflow.observe({ agent, t, problem: p.text, visible: [], history, position, agents: workflow.agents }));
    const given = reductions.map((r, k) => texts(r, k));
    turns.push({ inputs, given, correct: workflow.agents.map((_, k) => texts(right, k)), verdict });
    const values = reductions.map((r) => String(finalValue(p, r)));
    const answers: MathAgentAnswer[] = workflow.agents.map((a, k) => ({
      agent: a.name, role: a.role, answer: values[k]!, correct: reductions[k] === right,
      ...(a.role === 'Tool-User' ? { program: { found: true, status: 'ok' } } : {}),
    }));
    const agree = values[0] === values[1];
    history.push({ t, outputs: workflow.agents.map((a, k) => ({ agent: a.name, role: a.role, text: given[k]! })), feedback: consistencyFeedback(answers, agree) });
    if (agree) break;
    verdict = renderVerdict(mathAttribution(answers.map((a) => ({ agent: a.agent, role: a.role, answer: a.answer, correct: a.correct, ...(a.program ? { programStatus: a.program.status } : {}) }))));
    reductions = reductions.map((r, k) => (rng.next() < 0.5 ? r : reductions[1 - k]!));
  }
  return turns;
}

/** One training sequence: the chat prompt (generation prompt included), the reply and EOS; only the reply is scored. */
export function sequence(tokenizer: Tokenizer, messages: ChatMessage[], reply: string): ScoreRequest {
  const prompt = tokenizer.encodeChat(messages, { addGenerationPrompt: true });
  return { tokens: [...prompt, ...tokenizer.encode(reply), tokenizer.eosTokenIds[0]!], scoreFrom: prompt.length };
}

/** Students' pretraining batch: every turn's input and the imperfect reply, both roles. */
export function studentBatch(workflow: Workflow, tokenizer: Tokenizer, problems: Problem[], rng: Rng, noise: TranscriptNoise): ScoreRequest[] {
  return problems.flatMap((p) => simulateEpisode(workflow, p, rng, noise).flatMap((turn) => turn.inputs.map((m, k) => sequence(tokenizer, m, turn.given[k]!))));
}

/**
 * Which role conditions the teacher learns in each seat: 'own', the seat's role only (each agent's
 * input with its own condition); 'both', also the other role's condition in that seat, followed by
 * what the other role would correctly reply there (the Reasoner's input under the Tool-User's
 * condition: the Tool-User's program). With 'both' RAS's contrast pass, a response scored under
 * κ(r_i) in r_i's seat, reads a context the teacher was trained on (issue 19).
 */
export type TeacherConditions = 'own' | 'both';

/** Teacher's pretraining batch: every turn's teacher context and the correct reply, both roles (and with 'both', each seat under both conditions). */
export function teacherBatch(workflow: Workflow, tokenizer: Tokenizer, problems: Problem[], rng: Rng, noise: TranscriptNoise, conditions: TeacherConditions = 'own'): ScoreRequest[] {
  const roles = workflow.agents.map((a) => a.role);
  return problems.flatMap((p) =>
    simulateEpisode(workflow, p, rng, noise).flatMap((turn) => {
      const verdict = turn.verdict !== null && rng.next() < noise.verdictRate ? turn.verdict : null;
      return turn.inputs.flatMap((m, k) => {
        const seats = conditions === 'both' ? roles.map((_, j) => j) : [k];
        // Under the condition of agent j's role, the reply agent j's role would correctly give.
        return seats.map((j) => sequence(tokenizer, teacherMessages(m, conditionText(DEFAULT_ROLE_CONDITIONS, roles[j]!), verdict, 'first-sentence'), turn.correct[j]!));
      });
    }),
  );
}
