// The code environment (spec sections 2 and 3) for every workflow: sequential pipelines, single
// agents, and the Coder / Tester multi-turn pair.
//
// Per step:
// - team reward: the fraction of golden tests that the team's program passes (the last ```python
//   block of the step, or of the last agent of `answerRole` that wrote one), judged by src/verify/code;
// - Coder / Tester pairs: the environment runs every Coder's program on every Tester's case (input
//   on stdin, LiveCodeBench output comparison) and reports each disagreement, or the program's error
//   text, as the next turn's feedback; the episode ends when every program reproduces every declared
//   output. Golden tests and their results never appear in feedback;
// - role-local rewards for Coders (builds, runs, pass fraction) and Testers (valid case, reproduced
//   by the reference solution), rewards.ts.
import { compareOutput, compareValues, verifyCode, type CodeVerdict } from '../verify/code/index.ts';
import { extractPythonCode, extractTestCase } from '../workflow/builtin/formats.ts';
import type { StepInput, StepOutcome, TaskEnv } from '../workflow/env-api.ts';
import type { SlotLimiter } from '../sandbox/index.ts';
import type { CodeProblem } from './datasets/types.ts';
import { DEFAULT_ROLE_REWARD_WEIGHTS, coderReward, testerReward, type RoleRewardWeights } from './rewards.ts';
import { clip, defaultProgramRunner, excerpt, type ProgramRunner } from './program-runner.ts';

export const CODE_PROGRAM_TIMEOUT_MS = 30_000;

export interface CodeEnvOptions {
  /** Wall-clock limit per program run and per golden test (spec section 3: 30 s). */
  programTimeoutMs?: number;
  rewardWeights?: RoleRewardWeights;
  /** Whose program is the team's: the last agent of this role that wrote one; default: the last program of the step. */
  answerRole?: string;
  /** Runs the Coder's program on the Tester's case and the reference solution; default: Python in the sandbox. */
  runProgram?: ProgramRunner;
  /** Judges a program on the golden tests; default: src/verify/code's verifyCode. */
  judge?: CodeJudge;
  limiter?: SlotLimiter;
  /**
   * How a Tester's declared output is compared with what the reference solution (its reward and
   * PAC's test_correct) and each Coder program (the observation's run) print on its input:
   * 'values' (default) compares the whitespace-separated values whatever the line layout, as the
   * paper judges a test case by what it states (App. D, F.6); 'lines' applies the golden tests'
   * line-by-line rule (the behaviour before issue 19: one line "1 2" where the reference prints
   * "1" and "2" on two lines reads as a wrong test).
   */
  testerComparison?: TesterComparison;
}

/** A program's verdict on a code problem's golden tests. */
export type CodeJudge = (program: string, problem: CodeProblem, timeoutMs: number) => Promise<CodeVerdict>;

/** The golden tests run in the sandbox (src/verify/code). */
export const sandboxJudge: CodeJudge = (program, problem, timeoutMs) => verifyCode({ program, tests: problem.tests, timeoutMs });

export const TESTER_COMPARISONS = ['values', 'lines'] as const;
export type TesterComparison = (typeof TESTER_COMPARISONS)[number];

const CODER = 'Coder';
const TESTER = 'Tester';

/** One Coder program run on one Tester case. */
export interface CaseCheck {
  coder: string;
  tester: string;
  input: string;
  declared: string;
  status: string;
  printed: string;
  error?: string;
  agree: boolean;
}

/**
 * The training-time verifier's reading of the last step (PAC, src/opd/code-attributor.ts): whether
 * each Coder's program passes every golden test, whether the reference solution reproduces each
 * Tester's declared output, and the program runs on the Tester cases. Kept apart from finalScore()'s
 * info; it holds no golden test and no output of the reference solution, only booleans about them.
 */
export interface CodeTurnVerification {
  /** The problem has a reference solution (without one, no Tester case can be judged). */
  hasReference: boolean;
  coders: Array<{ agent: string; hasProgram: boolean; goldenPassed: boolean }>;
  testers: Array<{ agent: string; hasCase: boolean; reproduced: boolean }>;
  /** Every Coder program on every Tester case, sorted by (coder, tester). */
  checks: CaseCheck[];
}

/** How the statement is shown: the problem, then its starter code when it has one. */
export function codeFirstMessage(problem: CodeProblem): string {
  if (!problem.starterCode || problem.starterCode === problem.statement) return problem.statement;
  return `${problem.statement}\n\nStarter code:\n\`\`\`python\n${problem.starterCode.replace(/\s+$/, '')}\n\`\`\``;
}

export class CodeEnv implements TaskEnv {
  readonly problemId: string;
  readonly firstMessage: string;
  private readonly weights: RoleRewardWeights;
  private readonly timeoutMs: number;
  private readonly run: ProgramRunner;
  private readonly sameAsDeclared: (printed: string, declared: string) => boolean;
  private readonly verdicts = new Map<string, Promise<CodeVerdict>>();
  private readonly reproductions = new Map<string, Promise<boolean>>();
  private lastTeamReward = 0;
  private lastInfo: Record<string, unknown> = {};
  private lastVerification: CodeTurnVerification | null = null;
  private steps = 0;

  constructor(
    readonly problem: CodeProblem,
    private readonly options: CodeEnvOptions = {},
  ) {
    this.problemId = problem.id;
    this.firstMessage = codeFirstMessage(problem);
    this.weights = options.rewardWeights ?? DEFAULT_ROLE_REWARD_WEIGHTS;
    this.timeoutMs = options.programTimeoutMs ?? CODE_PROGRAM_TIMEOUT_MS;
    this.run = options.runProgram ?? defaultProgramRunner;
    const compare = (options.testerComparison ?? 'values') === 'values' ? compareValues : compareOutput;
    this.sameAsDeclared = (printed, declared) => compare(printed, declared).equal;
  }

  /**
   * An independent copy in the current state (branching samplers). The verdict caches are copied
   * (their entries are results of deterministic judgements, so the copy may reuse them); the
   * problem and options are read-only and shared.
   */
  clone(): CodeEnv {
    const copy = new CodeEnv(this.problem, this.options);
    for (const [k, v] of this.verdicts) copy.verdicts.set(k, v);
    for (const [k, v] of this.reproductions) copy.reproductions.set(k, v);
    copy.lastTeamReward = this.lastTeamReward;
    copy.lastInfo = structuredClone(this.lastInfo);
    copy.lastVerification = structuredClone(this.lastVerification);
    copy.steps = this.steps;
    return copy;
  }

  /** Golden-test verdict of a program, computed once per distinct source. */
  private golden(program: string): Promise<CodeVerdict> {
    let v = this.verdicts.get(program);
    if (!v) {
      if (this.options.judge) v = this.options.judge(program, this.problem, this.timeoutMs);
      else {
        const task: Parameters<typeof verifyCode>[0] = { program, tests: this.problem.tests, timeoutMs: this.timeoutMs };
        if (this.options.limiter) task.limiter = this.options.limiter;
        v = verifyCode(task);
      }
      this.verdicts.set(program, v);
    }
    return v;
  }

  /** Does the reference solution print the declared output for this input? false without a reference. */
  private reproduced(input: string, declared: string): Promise<boolean> {
    const ref = this.problem.referenceSolution;
    if (ref === undefined) return Promise.resolve(false);
    const key = `${input}\u0000${declared}`;
    let r = this.reproductions.get(key);
    if (!r) {
      r = this.run({ source: ref, stdin: input, timeoutMs: this.timeoutMs }).then((o) => o.status === 'ok' && this.sameAsDeclared(o.stdout, declared));
      this.reproductions.set(key, r);
    }
    return r;
  }

  private async builds(program: string): Promise<boolean> {
    const check = `import sys\ncompile(sys.stdin.read(), 'main.py', 'exec')\n`;
    const o = await this.run({ source: check, stdin: program, timeoutMs: this.timeoutMs });
    return o.status === 'ok';
  }

  async onStep(step: StepInput): Promise<StepOutcome> {
    this.steps++;
    // A Tester's fenced blocks are its test case, not a program.
    const programs = new Map(step.outputs.map((o) => [o.agent, o.role === TESTER ? null : extractPythonCode(o.text)]));
    // The team's program: the last one written (by an agent of `answerRole` when set), so a Tester's
    // case after the Coder's program, or a Verifier that only approves, leaves the program in force.
    const pool = step.outputs.filter((o) => programs.get(o.agent) !== null && (!this.options.answerRole || o.role === this.options.answerRole));
    const teamAgent = pool[pool.length - 1];
    const teamProgram = teamAgent ? (programs.get(teamAgent.agent) ?? null) : null;
    const teamVerdict = teamProgram === null ? null : await this.golden(teamProgram);
    const teamReward = teamVerdict && teamVerdict.total > 0 ? teamVerdict.passed / teamVerdict.total : 0;
    this.lastTeamReward = teamReward;

    const coders = step.outputs.filter((o) => o.role === CODER);
    const testers = step.outputs.filter((o) => o.role === TESTER);
    const cases = testers.map((t) => ({ tester: t.agent, testCase: extractTestCase(t.text) }));
    const checks: CaseCheck[] = [];
    await Promise.all(
      coders.flatMap((c) =>
        cases.map(async ({ tester, testCase }) => {
          const program = programs.get(c.agent) ?? null;
          if (program === null || testCase === null) return;
          const o = await this.run({ source: program, stdin: testCase.input, timeoutMs: this.timeoutMs });
          const check: CaseCheck = { coder: c.agent, tester, input: testCase.input, declared: testCase.output, status: o.status, printed: o.stdout, agree: o.status === 'ok' && this.sameAsDeclared(o.stdout, testCase.output) };
          if (o.status !== 'ok') check.error = excerpt(o.stderr || o.status);
          checks.push(check);
        }),
      ),
    );
    checks.sort((a, b) => (a.coder + a.tester < b.coder + b.tester ? -1 : 1));

    const perAgentReward: Record<string, number> = {};
    const coderChecks = new Map<string, CodeTurnVerification['coders'][number]>();
    const testerChecks = new Map<string, CodeTurnVerification['testers'][number]>();
    await Promise.all([
      ...coders.map(async (c) => {
        const program = programs.get(c.agent) ?? null;
        if (program === null) {
          perAgentReward[c.agent] = 0;
          coderChecks.set(c.agent, { agent: c.agent, hasProgram: false, goldenPassed: false });
          return;
        }
        const [builds, verdict] = await Promise.all([this.builds(program), this.golden(program)]);
        coderChecks.set(c.agent, { agent: c.agent, hasProgram: true, goldenPassed: verdict.total > 0 && verdict.passed === verdict.total });
        // "Runs": at least one golden test ran to completion (passed or printed a wrong answer).
        const runs = verdict.results.some((r) => r.status === 'passed' || r.status === 'wrong_answer');
        perAgentReward[c.agent] = coderReward(this.weights, { builds, runs, passFraction: verdict.total > 0 ? verdict.passed / verdict.total : 0 });
      }),
      ...cases.map(async ({ tester, testCase }) => {
        const reproduced = testCase === null ? false : await this.reproduced(testCase.input, testCase.output);
        testerChecks.set(tester, { agent: tester, hasCase: testCase !== null, reproduced });
        perAgentReward[tester] = testerReward(this.weights, { valid: testCase !== null, reproducedFraction: reproduced ? 1 : 0 });
      }),
    ]);

    this.lastVerification = {
      hasReference: this.problem.referenceSolution !== undefined,
      coders: coders.map((c) => coderChecks.get(c.agent)!),
      testers: cases.map((c) => testerChecks.get(c.tester)!),
      checks: structuredClone(checks),
    };
    this.lastInfo = {
      teamAgent: teamAgent?.agent ?? null,
      passed: teamVerdict?.passed ?? 0,
      total: teamVerdict?.total ?? 0,
      statuses: teamVerdict?.results.map((r) => r.status) ?? [],
      caseChecks: checks.map(({ coder, tester, status, agree }) => ({ coder, tester, status, agree })),
    };
    const outcome: StepOutcome = { teamReward, done: false };
    if (Object.keys(perAgentReward).length > 0) outcome.perAgentReward = perAgentReward;
    if (coders.length > 0 && testers.length > 0) {
      const complete = coders.every((c) => programs.get(c.agent) !== null) && cases.every((c) => c.testCase !== null);
      outcome.done = complete && checks.length > 0 && checks.every((c) => c.agree);
      outcome.feedback = caseFeedback(coders.map((c) => c.agent), programs, cases, checks);
    }
    return outcome;
  }

  finalScore(): { score: number; info: Record<string, unknown> } {
    return { score: this.lastTeamReward, info: { steps: this.steps, ...this.lastInfo } };
  }

  /** The verifier's reading of the last step (null before the first); read by PAC only, never shown to an agent. */
  verification(): CodeTurnVerification | null {
    return structuredClone(this.lastVerification);
  }

  sameAnswer(previous: string, current: string): boolean {
    const a = extractPythonCode(previous);
    const b = extractPythonCode(current);
    return a !== null && b !== null && a.trim() === b.trim();
  }
}

/**
 * Feedback shown to both roles: per Coder program and Tester case, "On test input {..}, the program
 * printed {..}, while the declared expected output was {..}." or the program's error text; missing
 * programs and malformed cases are named.
 */
export function caseFeedback(
  coders: string[],
  programs: Map<string, string | null>,
  cases: Array<{ tester: string; testCase: { input: string; output: string } | null }>,
  checks: CaseCheck[],
): string {
  const lines: string[] = [];
  for (const c of coders) if (programs.get(c) === null) lines.push(`${c} gave no program in a \`\`\`python block.`);
  for (const t of cases) if (t.testCase === null) lines.push(`${t.tester} gave no test case in the required format (Test Input / Test Output blocks).`);
  for (const k of checks) {
    const who = `${k.coder}'s program on ${k.tester}'s case`;
    if (k.status !== 'ok') lines.push(`${who}: on test input ${JSON.stringify(clip(k.input))}, the program failed (${k.status}):\n${k.error ?? ''}`);
    else {
      const verdict = k.agree ? 'They agree.' : 'They disagree.';
      lines.push(`${who}: on test input ${JSON.stringify(clip(k.input))}, the program printed ${JSON.stringify(clip(k.printed))}, while the declared expected output was ${JSON.stringify(clip(k.declared))}. ${verdict}`);
    }
  }
  return lines.join('\n');
}
