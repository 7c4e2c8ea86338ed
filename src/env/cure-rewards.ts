// CURE's rewards (Wang et al., "Co-Evolving LLM Coder and Unit Tester via Reinforcement Learning"),
// for one problem: n programs and n unit tests written by one shared policy, executed against each
// other in the sandbox (B[l][k]: program l passes test k), and each program judged on the problem's
// golden tests.
//
//   program reward   r_l = its pass rate on the golden tests;
//   test reward      a program is correct when it passes every golden test;
//                    r_k = +(fraction of the wrong programs that test k rejects) when every correct
//                          program passes test k (0 when there is no wrong program),
//                    r_k = −1 when some correct program fails it, or the test is malformed.
// This is the variant docs/algorithms.md states; the two groups (programs, tests) are then
// standardised separately by the group-relative estimator.
import { compareOutput } from '../verify/code/index.ts';
import { extractPythonCode, extractTestCase } from '../workflow/builtin/formats.ts';
import type { ProgramRunner } from './program-runner.ts';

/** CURE's reward of one unit test (see above). `passes[l]`: program l passes it; `correct[l]`: program l is correct. */
export function cureTestReward(correct: readonly boolean[], passes: readonly boolean[], valid = true): number {
  if (correct.length !== passes.length) throw new Error(`cureTestReward: ${correct.length} programs but ${passes.length} results`);
  if (!valid) return -1;
  if (correct.some((c, l) => c && !passes[l])) return -1;
  const wrong = correct.map((c, l) => l).filter((l) => !correct[l]);
  if (wrong.length === 0) return 0;
  return wrong.filter((l) => !passes[l]).length / wrong.length;
}

export interface CureGroupInput {
  /** The Coders' texts (a ```python block each, or none). */
  programs: string[];
  /** Their pass rates on the golden tests (0 without a program). */
  goldenPassRates: number[];
  /** The Testers' texts (Test Input / Test Output blocks). */
  tests: string[];
}

export interface CureGroupRewards {
  programs: number[];
  tests: number[];
  /** B[l][k]: program l reproduced test k's declared output. */
  passes: boolean[][];
}

/** Runs every program on every test's input (n × n sandboxed runs) and returns CURE's rewards. */
export async function cureGroupRewards(input: CureGroupInput, run: ProgramRunner, timeoutMs: number): Promise<CureGroupRewards> {
  const programs = input.programs.map(extractPythonCode);
  const tests = input.tests.map(extractTestCase);
  const passes = await Promise.all(programs.map((p) => Promise.all(tests.map(async (t) => {
    if (p === null || t === null) return false;
    const o = await run({ source: p, stdin: t.input, timeoutMs });
    return o.status === 'ok' && compareOutput(o.stdout, t.output).equal;
  }))));
  const correct = input.goldenPassRates.map((r) => r >= 1);
  return {
    programs: [...input.goldenPassRates],
    tests: tests.map((t, k) => cureTestReward(correct, passes.map((row) => row[k]!), t !== null)),
    passes,
  };
}
