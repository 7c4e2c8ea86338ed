// Evaluation arithmetic (issue 20 item 1): the unbiased pass@k estimator and the seed aggregation of
// spec section 7. Pure functions, no I/O.
//
// pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1): with n
// samples of a problem of which c are correct, the probability that k samples drawn without
// replacement hold at least one correct one is 1 − C(n−c, k) / C(n, k). The binomials overflow for
// realistic n, so the ratio is taken as the product ∏_{i=n−c+1}^{n} (1 − k/i), whose factors all lie
// in [0, 1); when n − c < k every draw of k holds a correct sample and pass@k is 1.
//
// Seed aggregation (spec section 7): scores[run][seed][problem] (a problem's score under one
// decoding seed of one training run); per seed the mean over problems, per run the mean of its seed
// means, then the mean over runs and the sample standard deviation (n − 1) over runs.

function checkCount(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer, got ${v}`);
}

/** Unbiased pass@k for n samples of which c are correct, 1 <= k <= n. */
export function passAtK(n: number, c: number, k: number): number {
  checkCount('n', n);
  checkCount('c', c);
  checkCount('k', k);
  if (c > n) throw new Error(`c (${c}) cannot exceed n (${n})`);
  if (k < 1 || k > n) throw new Error(`k must be in [1, n] = [1, ${n}], got ${k}`);
  if (n - c < k) return 1;
  // C(n−c, k) / C(n, k) = ∏_{i=n−c+1}^{n} (1 − k / i)
  let noneCorrect = 1;
  for (let i = n - c + 1; i <= n; i++) noneCorrect *= 1 - k / i;
  return 1 - noneCorrect;
}

/** pass@k for every k from 1 to n: entry k − 1 is pass@k. */
export function passAtKCurve(n: number, c: number): number[] {
  return Array.from({ length: n }, (_, i) => passAtK(n, c, i + 1));
}

/** The benchmark's pass@k: the mean over problems of each problem's pass@k (each with its own n and c). */
export function meanPassAtK(problems: ReadonlyArray<{ n: number; c: number }>, k: number): number {
  if (problems.length === 0) throw new Error('pass@k of no problems');
  return problems.reduce((sum, p) => sum + passAtK(p.n, p.c, k), 0) / problems.length;
}

function mean(xs: readonly number[], what: string): number {
  if (xs.length === 0) throw new Error(`${what}: nothing to average`);
  for (const x of xs) if (!Number.isFinite(x)) throw new Error(`${what}: ${x} is not a finite score`);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

export interface SeedAggregate {
  /** seedMeans[run][seed]: the mean over problems under one decoding seed of one run. */
  seedMeans: number[][];
  /** runMeans[run]: the mean of that run's seed means (the run's score). */
  runMeans: number[];
  /** The mean of the run scores. */
  mean: number;
  /** The sample standard deviation (n − 1) of the run scores; null with a single run. */
  std: number | null;
  runs: number;
}

/** Spec section 7's aggregation of scores[run][seed][problem]. */
export function aggregateOverSeeds(scores: ReadonlyArray<ReadonlyArray<readonly number[]>>): SeedAggregate {
  if (scores.length === 0) throw new Error('no training runs to aggregate');
  const seedMeans = scores.map((run, r) => {
    if (run.length === 0) throw new Error(`run ${r} has no decoding seeds`);
    return run.map((problems, s) => mean(problems, `run ${r}, seed ${s}`));
  });
  const runMeans = seedMeans.map((m, r) => mean(m, `run ${r}`));
  const overall = mean(runMeans, 'runs');
  const std = runMeans.length < 2 ? null : Math.sqrt(runMeans.reduce((a, x) => a + (x - overall) ** 2, 0) / (runMeans.length - 1));
  return { seedMeans, runMeans, mean: overall, std, runs: runMeans.length };
}
