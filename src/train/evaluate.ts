// Held-out evaluation (spec section 7): every held-out problem decoded once under each of
// `eval.seeds` (n) stochastic seeds at the evaluation decoding (eval.protocol, temperature, topP,
// topK); the score is the mean over seeds of the per-seed average over problems, and pass@k for
// every k ≤ n comes from each problem's n scores (src/core/pass-at-k.ts). The seeds do not depend on
// the run seed, so every checkpoint and the untrained system are scored on the same draws.
import type { SamplingEngine } from '../engine/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import { deriveSeed } from '../core/rng.ts';
import { aggregateOverSeeds, meanPassAtK } from '../core/pass-at-k.ts';
import { BASE_POLICY } from '../workflow/agent.ts';
import type { Episode } from '../workflow/trajectory.ts';
import type { Sampling, Task } from './task.ts';

/**
 * A sample counts as correct for pass@k when its score reaches 1: the maths answer is right, every
 * test of a program passes, the toy game's answer is the secret. A partial score (a program passing
 * some tests) is not a solution.
 */
export const SOLVED_SCORE = 1;

export interface EvalResult {
  /** Mean of the per-seed averages. */
  score: number;
  perSeed: number[];
  /** Episodes scored per seed (the number of problems). */
  problems: number;
  /** scores[seed][problem]: each problem's score under each decoding seed. */
  scores: number[][];
  /** The problems' ids, in the order of each seed's scores. */
  problemIds: string[];
  /** passAtK[k − 1]: the mean over problems of the unbiased pass@k, k = 1..n (empty without problems). */
  passAtK: number[];
  /** The sampling seed of each decoding seed (deriveSeed(EVAL_SEED_BASE, i)). */
  seeds: number[];
  protocol: string;
  sampling: Sampling;
  /** episodes[seed][problem], when asked for (keepEpisodes). */
  episodes?: Episode[][];
}

export interface EvalOptions {
  /** Keep every episode (marft eval --output); otherwise only their scores are kept. */
  keepEpisodes?: boolean;
}

export const EVAL_SEED_BASE = 424242;

/** The sampling seed of decoding seed `i` (0-based). */
export const evalSeed = (i: number): number => deriveSeed(EVAL_SEED_BASE, i);

export async function evaluatePolicies(engine: SamplingEngine, task: Task, config: MarftConfig, policies: Record<string, string>, options: EvalOptions = {}): Promise<EvalResult> {
  const sampling: Sampling = { temperature: config.eval.temperature, topP: config.eval.topP, topK: config.eval.topK, maxNewTokens: config.rollout.maxNewTokens };
  const seeds = Array.from({ length: config.eval.seeds }, (_, i) => evalSeed(i));
  const scores: number[][] = [];
  const episodes: Episode[][] = [];
  let problemIds: string[] = [];
  for (const [i, seed] of seeds.entries()) {
    const got = await task.evaluate(engine, { seed, sampling, problems: config.eval.problems, policies });
    const ids = got.map((e) => e.problemId);
    // pass@k counts a problem's correct samples over seeds: seed i's j-th episode must be the j-th problem.
    if (i === 0) problemIds = ids;
    else if (ids.length !== problemIds.length || ids.some((id, j) => id !== problemIds[j])) {
      throw new Error(`evaluation: the task scored other problems under decoding seed ${i} than under seed 0 (every seed must decode the same held-out problems, in the same order)`);
    }
    scores.push(got.map((e) => e.outcome));
    if (options.keepEpisodes) episodes.push(got);
  }
  const problems = problemIds.length;
  const perSeed = problems > 0 ? aggregateOverSeeds([scores]).seedMeans[0]! : scores.map(() => 0);
  const score = perSeed.reduce((s, x) => s + x, 0) / Math.max(1, perSeed.length);
  const counts = problemIds.map((_, j) => ({ n: seeds.length, c: scores.filter((bySeed) => bySeed[j]! >= SOLVED_SCORE).length }));
  const passAtK = problems > 0 ? seeds.map((_, k) => meanPassAtK(counts, k + 1)) : [];
  return { score, perSeed, problems, scores, problemIds, passAtK, seeds, protocol: config.eval.protocol, sampling, ...(options.keepEpisodes ? { episodes } : {}) };
}

/** Every agent on the frozen base model (the untrained system). */
export function basePolicies(task: Task): Record<string, string> {
  return Object.fromEntries(task.agents.map((a) => [a, BASE_POLICY]));
}
