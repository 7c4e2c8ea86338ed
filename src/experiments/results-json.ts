// OUT/results.json: the experiment's numbers for programs (plots, papers' tables), rebuilt from
// results.jsonl alone, exactly as table.json is, so that a rerun after any interruption writes the
// same file. {"methods": {ROW: {"benchmarks": {COLUMN: {mean, std, n, seeds, trainingSeeds, steps,
// passAtK?} | null}}}}: per benchmark the mean and sample standard deviation (n − 1) over training
// runs of each run's score (the mean of its per-decoding-seed averages, spec section 7), the run
// scores themselves in the row's seed order, and pass@k aggregated the same way where every run's
// evaluation gave it. docs/experiments.md lists every key.
import { aggregateOverSeeds } from '../core/pass-at-k.ts';
import type { Experiment } from './experiment-file.ts';
import { resultKey, type ExperimentResult } from './results.ts';

export interface PassAtKSummary {
  k: number;
  mean: number;
  std: number | null;
  /** Each run's pass@k, in the row's seed order. */
  seeds: number[];
}

export interface BenchmarkSummary {
  /** Mean over training runs of the runs' scores. */
  mean: number;
  /** Sample standard deviation (n − 1) over the runs; null for one run. */
  std: number | null;
  /** Runs with a result. */
  n: number;
  /** Each run's score (the mean of its per-decoding-seed averages), in the row's seed order. */
  seeds: number[];
  /** The training seed of each entry of `seeds`. */
  trainingSeeds: number[];
  /** The checkpoint step each run was scored at (null: a prompt-only row, nothing trained). */
  steps: (number | null)[];
  /** pass@k for k = 1..K, K the fewest decoding seeds of these runs; absent when a run's result has none. */
  passAtK?: PassAtKSummary[];
}

export interface ExperimentResultsJson {
  experiment: string;
  note: string;
  methods: Record<string, { benchmarks: Record<string, BenchmarkSummary | null> }>;
}

/** mean, std over runs of one number per run, through the seed aggregation (each run: one value). */
function overRuns(values: number[]): { mean: number; std: number | null; seeds: number[] } {
  const agg = aggregateOverSeeds(values.map((v) => [[v]]));
  return { mean: agg.mean, std: agg.std, seeds: agg.runMeans };
}

function summary(runs: ExperimentResult[]): BenchmarkSummary | null {
  if (runs.length === 0) return null;
  // Each run's score is the mean of its per-seed averages: spec section 7's aggregation of
  // scores[run][seed][·] with each seed's average over problems already taken by marft eval.
  const agg = aggregateOverSeeds(runs.map((r) => r.perSeed.map((m) => [m])));
  const out: BenchmarkSummary = {
    mean: agg.mean,
    std: agg.std,
    n: agg.runs,
    seeds: agg.runMeans,
    trainingSeeds: runs.map((r) => r.seed),
    steps: runs.map((r) => r.step),
  };
  if (runs.every((r) => Array.isArray(r.passAtK) && r.passAtK.length > 0)) {
    const K = Math.min(...runs.map((r) => r.passAtK!.length));
    out.passAtK = Array.from({ length: K }, (_, i) => ({ k: i + 1, ...overRuns(runs.map((r) => r.passAtK![i]!)) }));
  }
  return out;
}

export function buildResultsJson(exp: Experiment, results: ExperimentResult[]): ExperimentResultsJson {
  const found = new Map<string, ExperimentResult>();
  for (const r of results) if (!found.has(resultKey(r.row, r.seed, r.column))) found.set(resultKey(r.row, r.seed, r.column), r);
  const methods: ExperimentResultsJson['methods'] = {};
  for (const row of exp.rows) {
    const benchmarks: Record<string, BenchmarkSummary | null> = {};
    for (const column of exp.columns) {
      benchmarks[column.name] = summary(row.seeds.flatMap((s) => found.get(resultKey(row.name, s, column.name)) ?? []));
    }
    methods[row.name] = { benchmarks };
  }
  return {
    experiment: exp.name,
    note: 'per method (row) and benchmark (column): mean and sample standard deviation (n − 1) over training runs of each run\'s score, the mean of its per-decoding-seed averages over problems (spec section 7); seeds: the run scores in the row\'s seed order (trainingSeeds), each scored at the checkpoint step in steps; passAtK: the unbiased pass@k of each run, aggregated the same way; null: no run has a result there yet',
    methods,
  };
}
