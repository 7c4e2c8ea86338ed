// What a benchmark scorer is (issue 20 item 2): the benchmark authors' own rule for finding the
// answer in a model's response and for deciding whether it equals the reference answer.

/** Per-problem facts some benchmarks grade with (OlympiadBench's `error`, `answer_type`, `unit`). */
export interface BenchmarkProblemInfo {
  /**
   * OlympiadBench's per-problem tolerance, as its data file writes it: a number, a string such as
   * "1e-1", or a comma-separated list with one tolerance per answer ("1e34,1e-3"); null or absent:
   * the default (1e-8).
   */
  error?: string | number | null;
  /** OlympiadBench's answer_type: Numerical, Expression, Equation, Interval or Tuple. */
  answerType?: string | null;
  /** OlympiadBench's unit of the answer (the prompt asks for it outside the box). */
  unit?: string | null;
}

export interface BenchmarkScorer {
  /** The registry name ("math", "math500", "gsm8k", ...). */
  readonly name: string;
  /** One line: whose grader this reproduces (for --help and error messages). */
  readonly describe: string;
  /** The reference answer a gold field stands for (a worked solution is reduced to its answer). Null: no usable reference. */
  reference(gold: string): string | null;
  /** The answer a model's response states under the benchmark's extraction rule; null when it states none. */
  extract(response: string): string | null;
  /** Whether an extracted answer equals the reference answer under the benchmark's equivalence. Never throws. */
  equal(reference: string, answer: string, problem?: BenchmarkProblemInfo): boolean;
}
