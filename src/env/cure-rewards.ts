// CURE's rewards (Wang et al., "Co-Evolving LLM Coder and Unit Tester via Reinforcement Learning";
// their code, Gen-Verse/CURE, optimization/reward.py), for one problem: n programs and n unit tests
// written by one shared policy, executed against each other in the sandbox (B[l][k]: program l
// passes test k), and each program judged on the problem's golden tests.
//
//   program reward   r_l = its pass rate on the golden tests. A program is correct when it passes
//                    every golden test, wrong otherwise.
//   test reward      only when at least one program is correct (otherwise the problem's tests are
//                    not scored: the authors skip them, and here they get 0, a flat group that the
//                    cure plan leaves out of the update). The sign comes from the correct programs,
//                    the scale from the wrong ones:
//                      good test (every correct program passes it):  +1 × (fraction of the wrong
//                                                                    programs it rejects)
//                      bad test (some correct program fails it):     −1 × (fraction of the wrong
//                                                                    programs it accepts)
//                    and with no wrong program the scale is 1 (+1 / −1). A malformed test (no Test
//                    Input / Test Output blocks) is −1: the authors run such a case as an empty
//                    input with an empty expected output, which the Tester's format here cannot
//                    express (docs/algorithms.md lists it among CURE's departures).
// Each group (the programs, the tests) is then standardised separately by the group-relative
// estimator, and a group with no spread is dropped (the cure plan's dropFlatGroups).
import { compareOutput } from '../verify/code/index.ts';
import { extractPythonCode, extractTestCase } from '../workflow/builtin/formats.ts';
import type { ProgramRunner } from './program-runner.ts';

/**
 * CURE's reward of one unit test (see above), or null when no program is correct (the test is not
 * scored). `passes[l]`: program l passes it; `correct[l]`: program l is correct.
 */
export function cureTestReward(correct: readonly boolean[], passes: readonly boolean[], valid = true): number | null {
  if (correct.length !== passes.length) throw new Error(`cureTestReward: ${correct.length} programs but ${passes.length} results`);
  if (!correct.some((c) => c)) return null;
  if (!valid) return -1;
  const good = correct.every((c, l) => !c || passes[l]);
  const wrong = correct.map((_, l) => l).filter((l) => !correct[l]);
  if (wrong.length === 0) return good ? 1 : -1;
  // A good test is worth the share of wrong programs it catches; a bad one costs the share it lets through.
  if (good) return wrong.filter((l) => !passes[l]).length / wrong.length;
  const accepted = wrong.filter((l) => passes[l]).length;
  return accepted === 0 ? 0 : -accepted / wrong.length;
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
  /** Each test's reward; 0 for every test when `testsScored` is false. */
  tests: number[];
  /** At least one program is correct, so the tests were scored. */
  testsScored: boolean;
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
  const rewards = tests.map((t, k) => cureTestReward(correct, passes.map((row) => row[k]!), t !== null));
  return {
    programs: [...input.goldenPassRates],
    tests: rewards.map((r) => r ?? 0),
    testsScored: rewards.every((r) => r !== null),
    passes,
  };
}
