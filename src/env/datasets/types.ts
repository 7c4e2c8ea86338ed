// The common shape of benchmark problems (issue 3 item 3), whatever file layout they came from.
import type { CodeTests } from '../../verify/code/index.ts';

/** A maths problem: the question and the reference final answer (a LaTeX string). */
export interface MathProblem {
  domain: 'math';
  /** Unique inside its dataset, stable across loads (the source's id, else "<dataset>/<line>"). */
  id: string;
  dataset: string;
  question: string;
  /**
   * Reference final answer, compared with the benchmark's scorer when `benchmark` is set, else with
   * `mathAnswersEqual`.
   */
  answer: string;
  /**
   * The benchmark whose own scorer judges answers to this problem (src/verify/math/benchmarks:
   * gsm8k, math500, aime, amc23, olympiadbench, deepscaler, math); absent: marft's comparison.
   * Set by the loaders of the benchmark datasets (DATASET_BENCHMARKS).
   */
  benchmark?: string;
  /** Worked reference solution, when the source has one. */
  solution?: string;
  /** Everything else worth keeping (level, subject, answer type, ...). */
  meta: Record<string, unknown>;
}

/**
 * A coding problem: statement and golden tests of one of the three kinds (stdin/stdout, an assertion
 * script run after the program, call-based with JSON arguments), as src/verify/code judges them.
 */
export interface CodeProblem {
  domain: 'code';
  id: string;
  dataset: string;
  statement: string;
  tests: CodeTests;
  /** Code the answer must start from (HumanEval prompt, LeetCode class stub, APPS function header). */
  starterCode?: string;
  /** Function the tests call (call-based tests, HumanEval's candidate). */
  entryPoint?: string;
  /** A reference solution that passes the tests, when the source has one (Python). */
  referenceSolution?: string;
  meta: Record<string, unknown>;
}

export type Problem = MathProblem | CodeProblem;

/** One malformed record: where it is and what is wrong. The rest of the file still loads. */
export interface LoadError {
  file: string;
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface LoadResult<P> {
  problems: P[];
  errors: LoadError[];
}

/** Thrown inside a row converter to reject one record with a clear reason. */
export class RecordError extends Error {
  override name = 'RecordError';
}
