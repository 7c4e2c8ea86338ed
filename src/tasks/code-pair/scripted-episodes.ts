// Scripted episodes of the code-pair task's systems (./code-pair-task.ts): the pretraining
// transcripts of its students' base, for the Coder–Tester pair and the single Coder (SA+ST, SA+MT).
//
// Each episode is played through the real code environment (src/env/code-env.ts) and the
// workflow's own observation builder and stop rule, so the feedback lines (each program run on each
// test case), the agreement stop and SA+MT's self-consistency stop are what a rollout produces;
// only the replies are scripted. The scripted programs print a known expression of their input, so
// they are answered here (run and judged on the golden tests) instead of in the sandbox.
//
// The imperfect behaviour (the arith-pair study's, ../arith-pair/scripted-episodes.ts):
//   turn 0     each agent reduces the wrong operator first with probability `wrongOrder` (the
//              Coder parenthesises the expression, the Tester computes its declared output so);
//              the Tester picks its input uniformly from 1..9 and keeps it;
//   turn t>0   an agent of the pair keeps its previous order or adopts the other role's, with
//              probability ½ each, whoever was right; a single Coder keeps or switches, ½ each.
import type { ScoreRequest } from '../../engine/types.ts';
import { CodeEnv, type CodeJudge } from '../../env/code-env.ts';
import type { ProgramRunner } from '../../env/program-runner.ts';
import type { ChatMessage, Tokenizer } from '../../tokenizer/types.ts';
import { compareOutput, type CodeVerdict } from '../../verify/code/index.ts';
import type { AgentOutput, TurnRecord, Workflow } from '../../workflow/index.ts';
import type { Rng } from '../../core/rng.ts';
import type { Reduction } from '../arith-duo/task.ts';
import { sequence, type TranscriptNoise } from '../arith-pair/transcripts.ts';
import { codeProblem, coderText, programSource, rightReduction, testerText, TESTER_INPUTS, valueAt, type CodeExpression } from './code-problems.ts';

const TESTER = 'Tester';

export interface ScriptedCodeTurn {
  /** Per agent: its input messages and the reply it gave. */
  inputs: ChatMessage[][];
  given: string[];
}

/** What each scripted program prints for an input. */
type Printed = Map<string, (x: number) => number>;

function printedBy(printed: Printed, source: string): (x: number) => number {
  const f = printed.get(source);
  if (!f) throw new Error(`scripted code episode: a program that was not scripted: ${JSON.stringify(source)}`);
  return f;
}

/** Runs the scripted programs, and the environment's compile check (every scripted program compiles). */
function scriptRunner(printed: Printed): ProgramRunner {
  return async (run) => {
    const ok = (stdout: string) => ({ status: 'ok' as const, exitCode: 0, signal: null, stdout, stderr: '', wallMs: 0 });
    if (run.source.startsWith('import sys\ncompile(')) return ok('');
    return ok(`${printedBy(printed, run.source)(Number(run.stdin.trim()))}\n`);
  };
}

/** Judges a scripted program on the golden tests by the verifier's own output comparison. */
function scriptJudge(printed: Printed): CodeJudge {
  return async (program, problem): Promise<CodeVerdict> => {
    const f = printedBy(printed, program);
    if (problem.tests.kind !== 'stdio') throw new Error('code-pair problems have stdio tests');
    const results = problem.tests.tests.map((t) => (compareOutput(`${f(Number(t.stdin.trim()))}\n`, t.stdout).equal ? { status: 'passed' as const } : { status: 'wrong_answer' as const, stderr: 'output differs' }));
    return { passed: results.filter((r) => r.status === 'passed').length, total: results.length, results };
  };
}

/** One scripted episode of `workflow` on `e`: every turn's inputs and replies. */
export async function scriptedCodeEpisode(workflow: Workflow, e: CodeExpression, rng: Rng, noise: TranscriptNoise): Promise<ScriptedCodeTurn[]> {
  const right = rightReduction(e);
  const wrong = (1 - right) as Reduction;
  // The reference solution (the right-order program) runs on every Tester case.
  const printed: Printed = new Map([[programSource(e, right), (x: number) => valueAt(e, x, right)]]);
  const { agents } = workflow;
  const inputs = agents.map(() => rng.pick(TESTER_INPUTS));
  const reply = (k: number, r: Reduction): string => {
    if (agents[k]!.role === TESTER) return testerText(e, inputs[k]!, r);
    printed.set(programSource(e, r), (x) => valueAt(e, x, r));
    return coderText(e, r);
  };
  const env = new CodeEnv(codeProblem(e), { runProgram: scriptRunner(printed), judge: scriptJudge(printed) });
  const isPair = agents.some((a) => a.role === TESTER);
  let reductions: Reduction[] = agents.map(() => (rng.next() < noise.wrongOrder ? wrong : right));
  const history: TurnRecord[] = [];
  const turns: ScriptedCodeTurn[] = [];
  for (let t = 0; t < workflow.horizon; t++) {
    const observed = agents.map((agent, position) => workflow.observe({ agent, t, problem: env.firstMessage, visible: [], history, position, agents }));
    const given = agents.map((_, k) => reply(k, reductions[k]!));
    turns.push({ inputs: observed, given });
    const outputs: AgentOutput[] = agents.map((a, k) => ({ agent: a.name, role: a.role, text: given[k]! }));
    const outcome = await env.onStep({ t, outputs });
    const stopped = outcome.done || (workflow.stop?.({ t, outputs, history, env }) ?? false);
    history.push({ t, outputs, ...(outcome.feedback !== undefined ? { feedback: outcome.feedback } : {}) });
    if (stopped) break;
    reductions = reductions.map((r, k) => {
      if (rng.next() < 0.5) return r;
      if (!isPair) return (1 - r) as Reduction;
      return reductions[agents.findIndex((a) => a.role !== agents[k]!.role)]!;
    });
  }
  return turns;
}

/** The students' pretraining sequences: every turn's input and the imperfect reply, every agent. */
export async function scriptedCodeBatch(episodes: { workflow: Workflow; problem: CodeExpression }[], tokenizer: Tokenizer, rng: Rng, noise: TranscriptNoise): Promise<ScoreRequest[]> {
  const out: ScoreRequest[] = [];
  for (const { workflow, problem } of episodes) {
    for (const turn of await scriptedCodeEpisode(workflow, problem, rng, noise)) turn.inputs.forEach((m, k) => out.push(sequence(tokenizer, m, turn.given[k]!)));
  }
  return out;
}
