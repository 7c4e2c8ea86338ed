// Benchmark-faithful scoring (issue 20 item 2): each benchmark's answers judged the way its
// authors' code judges them. One scorer per benchmark (or per family sharing one grader):
//   math           hendrycks/math is_equiv                              (math.ts)
//   math500        openai/prm800k grade_answer                          (prm800k.ts)
//   deepscaler     DeepScaleR's reward: PRM800K's grader, boxed only    (deepscaler.ts)
//   gsm8k          openai/grade-school-math's "####" check              (gsm8k.ts)
//   olympiadbench  OpenBMB/OlympiadBench MathJudger                     (olympiadbench.ts)
//   aime           MathArena's integer check                            (aime.ts)
//   amc23          Qwen2.5-Math evaluation's numeric math_equal         (amc23.ts)
// Without a benchmark name, scoreAnswer is exactly marft's own mathAnswersEqual.
import { mathAnswersEqual } from '../index.ts';
import { aimeScorer } from './aime.ts';
import { amc23Scorer } from './amc23.ts';
import { deepscalerScorer } from './deepscaler.ts';
import { gsm8kScorer } from './gsm8k.ts';
import { mathScorer } from './math.ts';
import { olympiadbenchScorer } from './olympiadbench.ts';
import { math500Scorer } from './prm800k.ts';
import type { BenchmarkProblemInfo, BenchmarkScorer } from './types.ts';

export type { BenchmarkProblemInfo, BenchmarkScorer } from './types.ts';
export { olympiadJudge, olympiadPrecision } from './olympiadbench.ts';
export { prm800kGradeAnswer } from './prm800k.ts';
export { hendrycksIsEquiv } from './hendrycks-normalize.ts';

export const BENCHMARK_SCORERS: Readonly<Record<string, BenchmarkScorer>> = Object.fromEntries(
  [mathScorer, math500Scorer, gsm8kScorer, olympiadbenchScorer, aimeScorer, amc23Scorer, deepscalerScorer].map((s) => [s.name, s]),
);

export const BENCHMARK_NAMES: readonly string[] = Object.keys(BENCHMARK_SCORERS);

/** The scorer of a benchmark name; throws a one-line error naming the known ones. */
export function benchmarkScorer(name: string): BenchmarkScorer {
  const scorer = Object.hasOwn(BENCHMARK_SCORERS, name) ? BENCHMARK_SCORERS[name] : undefined;
  if (!scorer) throw new Error(`unknown benchmark ${JSON.stringify(name)} (known: ${BENCHMARK_NAMES.join(', ')})`);
  return scorer;
}

/**
 * Whether `pred` answers `gold` under the benchmark's scorer: gold is reduced to its reference
 * answer (a worked solution to its marked answer), pred is read as a model's response with the
 * benchmark's extraction rule (a boxed-only benchmark finds nothing in an unboxed answer), and the
 * two are compared with the benchmark's equivalence. Without a benchmark: mathAnswersEqual(gold, pred).
 * Throws only for an unknown benchmark name.
 */
export function scoreAnswer(benchmark: string | undefined, gold: string, pred: string, problem?: BenchmarkProblemInfo): boolean {
  if (benchmark === undefined) return mathAnswersEqual(gold, pred);
  const scorer = benchmarkScorer(benchmark);
  const reference = scorer.reference(gold);
  const answer = scorer.extract(pred);
  return reference !== null && answer !== null && scorer.equal(reference, answer, problem);
}

/**
 * The benchmark's equivalence alone, for an answer already read from a response by someone else's
 * rule (the maths environment reads agents' answers by the workflow's format): gold is still
 * reduced to its reference answer. Without a benchmark: mathAnswersEqual(gold, answer).
 */
export function answersEqualUnder(benchmark: string | undefined, gold: string, answer: string, problem?: BenchmarkProblemInfo): boolean {
  if (benchmark === undefined) return mathAnswersEqual(gold, answer);
  const scorer = benchmarkScorer(benchmark);
  const reference = scorer.reference(gold);
  return reference !== null && scorer.equal(reference, answer, problem);
}

/**
 * The benchmark whose scorer grades a dataset of src/env/datasets by default: the held-out
 * benchmarks and DeepScaleR's training set (whose reward is its own grader); none (marft's own
 * comparison) for the other training sets (gsm8k-train, polaris, a generic file).
 */
export const DATASET_BENCHMARKS: Readonly<Record<string, string>> = {
  gsm8k: 'gsm8k',
  'gsm8k-socratic': 'gsm8k',
  math500: 'math500',
  aime2024: 'aime',
  aime2025: 'aime',
  'aime2024-qwen': 'aime',
  amc23: 'amc23',
  olympiadbench: 'olympiadbench',
  deepscaler: 'deepscaler',
};
