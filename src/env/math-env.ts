// The maths environment (spec sections 2 and 3) for every workflow: sequential pipelines, single
// agents, and the Reasoner / Tool-User multi-turn pair.
//
// Per step:
// - each agent's answer is read from its output: a Tool-User's program is run in the sandbox
//   (wall-clock 20 s by default) and its printed output is the answer; any other agent's answer is
//   its text after "####", else the extracted final answer (\boxed{}, "the answer is", last number);
// - team reward: 1 if the team's answer (the last agent's, or the last agent of `answerRole`)
//   equals the reference answer, else 0. "Equals" is the problem's benchmark scorer when it has one
//   (problem.benchmark, set by the benchmark datasets' loaders: held-out evaluation on GSM8K,
//   MATH-500, AIME, AMC 23 or OlympiadBench is judged as those benchmarks' authors judge it, and
//   DeepScaleR's training set by DeepScaleR's reward), else marft's mathAnswersEqual. The answer is
//   still read by the workflow's format (####, \boxed, ...); the benchmark decides equivalence
//   (answersEqualUnder). Agreement between agents is always marft's comparison;
// - role-local rewards for Reasoners and Tool-Users (rewards.ts);
// - with Tool-Users present, feedback for the next turn reports every agent's answer (or the program's
//   error text) and whether they agree; the episode ends when all of them agree. The reference
//   answer never appears in feedback.
import { extractHashAnswer, extractPythonCode } from '../workflow/builtin/formats.ts';
import type { AgentOutput, StepInput, StepOutcome, TaskEnv } from '../workflow/env-api.ts';
import { extractAnswer, mathAnswersEqual } from '../verify/math/index.ts';
import { answersEqualUnder, benchmarkScorer, type BenchmarkProblemInfo } from '../verify/math/benchmarks/index.ts';
import type { MathProblem } from './datasets/types.ts';
import { DEFAULT_ROLE_REWARD_WEIGHTS, reasonerReward, toolUserReward, type RoleRewardWeights } from './rewards.ts';
import { defaultProgramRunner, excerpt, type ProgramRunner } from './program-runner.ts';

export const MATH_PROGRAM_TIMEOUT_MS = 20_000;

export interface MathEnvOptions {
  /** Wall-clock limit of a Tool-User program (spec section 3: 20 s). */
  programTimeoutMs?: number;
  rewardWeights?: RoleRewardWeights;
  /** Whose answer is the team's: the last agent of this role in the step; default: the last agent. */
  answerRole?: string;
  /** Runs programs; default: Python in the sandbox. */
  runProgram?: ProgramRunner;
  /** Text placed after the question in the first message (e.g. an answer-format instruction). */
  questionSuffix?: string;
  /**
   * Which scorer judges the team's answer against the reference: a benchmark name
   * (src/verify/math/benchmarks) for every problem, null for marft's own comparison; absent: the
   * problem's own `benchmark` (if any).
   */
  benchmark?: string | null;
}

/** The facts a benchmark scorer grades with, from a problem's meta (OlympiadBench's error, answer_type, unit). */
function problemInfo(problem: MathProblem): BenchmarkProblemInfo {
  const info: BenchmarkProblemInfo = {};
  const { error, answer_type: answerType, unit } = problem.meta as Record<string, unknown>;
  if (typeof error === 'string' || typeof error === 'number') info.error = error;
  if (typeof answerType === 'string') info.answerType = answerType;
  if (typeof unit === 'string') info.unit = unit;
  return info;
}

/** What the environment read from one agent's output. */
export interface MathAgentAnswer {
  agent: string;
  role: string;
  /** The answer, or null when the output holds none (or the program failed). */
  answer: string | null;
  /** Tool-User only: how the program run ended, and its error text when it failed. */
  program?: { found: boolean; status: string; error?: string };
  correct: boolean;
}

const TOOL_USER = 'Tool-User';
const REASONER = 'Reasoner';

export class MathEnv implements TaskEnv {
  readonly problemId: string;
  readonly firstMessage: string;
  private readonly weights: RoleRewardWeights;
  private readonly timeoutMs: number;
  private readonly run: ProgramRunner;
  /** The benchmark whose scorer judges answers here; undefined: mathAnswersEqual. */
  readonly benchmark: string | undefined;
  private readonly info: BenchmarkProblemInfo;
  private lastTeamReward = 0;
  private lastAnswers: MathAgentAnswer[] = [];
  private steps = 0;

  constructor(
    readonly problem: MathProblem,
    private readonly options: MathEnvOptions = {},
  ) {
    this.problemId = problem.id;
    this.firstMessage = options.questionSuffix ? `${problem.question}\n\n${options.questionSuffix}` : problem.question;
    this.weights = options.rewardWeights ?? DEFAULT_ROLE_REWARD_WEIGHTS;
    this.timeoutMs = options.programTimeoutMs ?? MATH_PROGRAM_TIMEOUT_MS;
    this.run = options.runProgram ?? defaultProgramRunner;
    const benchmark = options.benchmark === undefined ? problem.benchmark : options.benchmark;
    this.benchmark = benchmark ?? undefined;
    // An unknown name fails here, once, with the list of known ones.
    if (this.benchmark !== undefined) benchmarkScorer(this.benchmark);
    this.info = problemInfo(problem);
  }

  /** Whether an agent's answer equals the reference, by the problem's scorer. */
  private isCorrect(answer: string): boolean {
    return answersEqualUnder(this.benchmark, this.problem.answer, answer, this.info);
  }

  /** An independent copy in the current state (branching samplers); the problem and options are read-only and shared. */
  clone(): MathEnv {
    const copy = new MathEnv(this.problem, this.options);
    copy.lastTeamReward = this.lastTeamReward;
    copy.lastAnswers = structuredClone(this.lastAnswers);
    copy.steps = this.steps;
    return copy;
  }

  /** The answer a text states: after "####" when present, else the extracted final answer. */
  static textAnswer(text: string): string | null {
    return extractHashAnswer(text) ?? extractAnswer(text);
  }

  private async readAnswer(out: AgentOutput): Promise<MathAgentAnswer> {
    if (out.role === TOOL_USER) {
      const code = extractPythonCode(out.text);
      if (code === null) return { agent: out.agent, role: out.role, answer: null, program: { found: false, status: 'no_program', error: 'no ```python code block' }, correct: false };
      const outcome = await this.run({ source: code, stdin: '', timeoutMs: this.timeoutMs });
      const lines = outcome.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
      const printed = lines.length > 0 ? lines[lines.length - 1]! : null;
      const ok = outcome.status === 'ok';
      const program: MathAgentAnswer['program'] = { found: true, status: outcome.status };
      if (!ok) program.error = excerpt(outcome.stderr || outcome.status);
      const answer = ok ? printed : null;
      return { agent: out.agent, role: out.role, answer, program, correct: answer !== null && this.isCorrect(answer) };
    }
    const answer = MathEnv.textAnswer(out.text);
    return { agent: out.agent, role: out.role, answer, correct: answer !== null && this.isCorrect(answer) };
  }

  async onStep(step: StepInput): Promise<StepOutcome> {
    this.steps++;
    const answers = await Promise.all(step.outputs.map((o) => this.readAnswer(o)));
    this.lastAnswers = answers;
    const team = this.teamAnswer(answers);
    const teamReward = team?.correct ? 1 : 0;
    this.lastTeamReward = teamReward;

    const perAgentReward: Record<string, number> = {};
    for (const a of answers) {
      const out = step.outputs.find((o) => o.agent === a.agent)!;
      if (a.role === REASONER) perAgentReward[a.agent] = reasonerReward(this.weights, { format: extractHashAnswer(out.text) !== null, correct: a.correct });
      else if (a.role === TOOL_USER) {
        perAgentReward[a.agent] = toolUserReward(this.weights, { runs: a.program?.status === 'ok', parsable: a.answer !== null && extractAnswer(a.answer) !== null, correct: a.correct });
      }
    }

    const outcome: StepOutcome = { teamReward, done: false };
    if (Object.keys(perAgentReward).length > 0) outcome.perAgentReward = perAgentReward;
    if (answers.some((a) => a.role === TOOL_USER)) {
      const agree = answersAgree(answers);
      outcome.done = agree;
      outcome.feedback = consistencyFeedback(answers, agree);
    }
    return outcome;
  }

  private teamAnswer(answers: MathAgentAnswer[]): MathAgentAnswer | undefined {
    const pool = this.options.answerRole ? answers.filter((a) => a.role === this.options.answerRole) : answers;
    return pool[pool.length - 1];
  }

  finalScore(): { score: number; info: Record<string, unknown> } {
    return {
      score: this.lastTeamReward,
      info: { reference: this.problem.answer, scorer: this.benchmark ?? 'marft', steps: this.steps, answers: this.lastAnswers.map((a) => ({ agent: a.agent, role: a.role, answer: a.answer, correct: a.correct, ...(a.program ? { program: a.program } : {}) })) },
    };
  }

  sameAnswer(previous: string, current: string): boolean {
    const a = MathEnv.textAnswer(previous);
    const b = MathEnv.textAnswer(current);
    return a !== null && b !== null && mathAnswersEqual(a, b);
  }
}

/** All agents gave an answer and every answer equals the first. */
export function answersAgree(answers: MathAgentAnswer[]): boolean {
  const first = answers[0]?.answer;
  if (first === null || first === undefined) return false;
  return answers.every((a) => a.answer !== null && mathAnswersEqual(first, a.answer));
}

/** The next turn's feedback: one line per agent, then whether they agree. Never mentions the reference. */
export function consistencyFeedback(answers: MathAgentAnswer[], agree: boolean): string {
  const lines = answers.map((a) => {
    if (a.role === TOOL_USER) {
      if (!a.program?.found) return `${a.agent} (${a.role}) gave no program in a \`\`\`python block.`;
      if (a.program.status !== 'ok') return `${a.agent} (${a.role}): the program failed (${a.program.status}):\n${a.program.error ?? ''}`;
      return a.answer === null ? `${a.agent} (${a.role}): the program printed nothing.` : `${a.agent} (${a.role}): the program printed ${a.answer}`;
    }
    return a.answer === null ? `${a.agent} (${a.role}) stated no final answer after ####.` : `${a.agent} (${a.role}) answered ${a.answer}`;
  });
  lines.push(agree ? 'The answers agree.' : 'The answers do not agree.');
  return lines.join('\n');
}
