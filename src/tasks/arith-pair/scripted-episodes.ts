// Scripted episodes of the arith-pair task's workflows (./arith-pair-task.ts): the pretraining
// transcripts of its students' base and of its teacher, for any of its systems (the
// Reasoner–Tool-User pair with one or two agents per role, SA+ST, SA+MT).
//
// Each episode is played through the real maths environment (src/env/math-env.ts) and the
// workflow's own observation builder and stop rule, so the feedback lines, the agreement stop and
// SA+MT's self-consistency stop are exactly what a rollout produces; only the replies are scripted.
// The Tool-User's programs are one-line prints of an expression whose value is known, so they are
// answered here instead of in the sandbox.
//
// The imperfect behaviour (what the students' base is trained to imitate):
//   turn 0     every agent reduces the wrong operator first with probability `wrongOrder`;
//   turn t>0   a pair's agent keeps its previous reduction or adopts that of an agent of the other
//              role (one drawn at random), with probability ½ each, whoever was right; a single
//              agent keeps its reduction or switches, with probability ½ each.
// The teacher's sequences pair each context (role condition in place of the role line; after a
// disagreement, with probability `verdictRate`, the PAC verdict on the previous turn) with the
// correct reply.
import type { ScoreRequest } from '../../engine/types.ts';
import { MathEnv } from '../../env/math-env.ts';
import type { ProgramRunner } from '../../env/program-runner.ts';
import { mathAttribution, renderVerdict } from '../../opd/pac.ts';
import { conditionText, DEFAULT_ROLE_CONDITIONS } from '../../opd/role-conditions.ts';
import { teacherMessages } from '../../opd/teacher-context.ts';
import type { ChatMessage, Tokenizer } from '../../tokenizer/types.ts';
import { extractPythonCode, type AgentOutput, type TurnRecord, type Workflow } from '../../workflow/index.ts';
import type { Rng } from '../../core/rng.ts';
import { type Problem, type Reduction, correctReduction } from '../arith-duo/task.ts';
import { finalValue, mathProblem, reasonerText, toolUserText } from './study-task.ts';
import { sequence, type TranscriptNoise } from './transcripts.ts';

const TOOL_USER = 'Tool-User';

export interface ScriptedTurn {
  /** Per agent: its input messages, the reply it gave, and the correct reply. */
  inputs: ChatMessage[][];
  given: string[];
  correct: string[];
  /** The PAC verdict on the previous turn (pairs only; null at turn 0 and for a single agent). */
  verdict: string | null;
}

/** Answers the scripted programs: each prints the value of the expression it was written for. */
function scriptRunner(printed: Map<string, string>): ProgramRunner {
  return async (run) => {
    const value = printed.get(run.source);
    if (value === undefined) throw new Error(`scripted episode: a program that was not scripted: ${JSON.stringify(run.source)}`);
    return { status: 'ok', exitCode: 0, signal: null, stdout: `${value}\n`, stderr: '', wallMs: 0 };
  };
}

/** One scripted episode of `workflow` on `p`: every turn's inputs and replies. */
export async function scriptedEpisode(workflow: Workflow, p: Problem, rng: Rng, noise: TranscriptNoise): Promise<ScriptedTurn[]> {
  const right = correctReduction(p);
  const wrong = (1 - right) as Reduction;
  const printed = new Map<string, string>();
  const reply = (role: string, r: Reduction): string => {
    if (role !== TOOL_USER) return reasonerText(p, r);
    const text = toolUserText(p, r);
    printed.set(extractPythonCode(text)!, String(finalValue(p, r)));
    return text;
  };
  const env = new MathEnv(mathProblem(p), { runProgram: scriptRunner(printed) });
  const { agents } = workflow;
  const isPair = agents.some((a) => a.role === TOOL_USER);
  let reductions: Reduction[] = agents.map(() => (rng.next() < noise.wrongOrder ? wrong : right));
  const history: TurnRecord[] = [];
  const turns: ScriptedTurn[] = [];
  let verdict: string | null = null;
  for (let t = 0; t < workflow.horizon; t++) {
    const inputs = agents.map((agent, position) => workflow.observe({ agent, t, problem: env.firstMessage, visible: [], history, position, agents }));
    const given = agents.map((a, k) => reply(a.role, reductions[k]!));
    turns.push({ inputs, given, correct: agents.map((a) => reply(a.role, right)), verdict });
    const outputs: AgentOutput[] = agents.map((a, k) => ({ agent: a.name, role: a.role, text: given[k]! }));
    const outcome = await env.onStep({ t, outputs });
    const stopped = outcome.done || (workflow.stop?.({ t, outputs, history, env }) ?? false);
    history.push({ t, outputs, ...(outcome.feedback !== undefined ? { feedback: outcome.feedback } : {}) });
    if (stopped) break;
    verdict = isPair
      ? renderVerdict(mathAttribution(agents.map((a, k) => ({ agent: a.name, role: a.role, answer: String(finalValue(p, reductions[k]!)), correct: reductions[k] === right, ...(a.role === TOOL_USER ? { programStatus: 'ok' } : {}) }))))
      : null;
    reductions = reductions.map((r, k) => {
      if (rng.next() < 0.5) return r;
      if (!isPair) return (1 - r) as Reduction;
      const others = agents.map((a, j) => ({ a, j })).filter(({ a }) => a.role !== agents[k]!.role);
      // A lone counterpart takes no draw: the pair's episodes are then the demo's simulator's (./transcripts.ts).
      return reductions[(others.length === 1 ? others[0]! : rng.pick(others)).j]!;
    });
  }
  return turns;
}

/** The students' pretraining sequences: every turn's input and the imperfect reply, every agent. */
export async function scriptedStudentBatch(episodes: { workflow: Workflow; problem: Problem }[], tokenizer: Tokenizer, rng: Rng, noise: TranscriptNoise): Promise<ScoreRequest[]> {
  const out: ScoreRequest[] = [];
  for (const { workflow, problem } of episodes) {
    for (const turn of await scriptedEpisode(workflow, problem, rng, noise)) turn.inputs.forEach((m, k) => out.push(sequence(tokenizer, m, turn.given[k]!)));
  }
  return out;
}

/** The teacher's pretraining sequences: every turn's teacher context (its own role's condition) and the correct reply. */
export async function scriptedTeacherBatch(episodes: { workflow: Workflow; problem: Problem }[], tokenizer: Tokenizer, rng: Rng, noise: TranscriptNoise): Promise<ScoreRequest[]> {
  const out: ScoreRequest[] = [];
  for (const { workflow, problem } of episodes) {
    for (const turn of await scriptedEpisode(workflow, problem, rng, noise)) {
      const verdict = turn.verdict !== null && rng.next() < noise.verdictRate ? turn.verdict : null;
      turn.inputs.forEach((m, k) => {
        const condition = conditionText(DEFAULT_ROLE_CONDITIONS, workflow.agents[k]!.role);
        out.push(sequence(tokenizer, teacherMessages(m, condition, verdict, 'first-sentence'), turn.correct[k]!));
      });
    }
  }
  return out;
}
