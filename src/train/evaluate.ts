// Held-out evaluation (spec section 7): every held-out problem decoded once under each of
// `eval.seeds` stochastic seeds at the evaluation temperature; the score is the mean over seeds of
// the per-seed average. The seeds do not depend on the run seed, so every checkpoint and the
// untrained system are scored on the same draws.
import type { SamplingEngine } from '../engine/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import { deriveSeed } from '../core/rng.ts';
import { BASE_POLICY } from '../workflow/agent.ts';
import type { Task } from './task.ts';

export interface EvalResult {
  /** Mean of the per-seed averages. */
  score: number;
  perSeed: number[];
  /** Episodes scored per seed. */
  problems: number;
}

export const EVAL_SEED_BASE = 424242;

export async function evaluatePolicies(engine: SamplingEngine, task: Task, config: MarftConfig, policies: Record<string, string>): Promise<EvalResult> {
  const perSeed: number[] = [];
  let problems = 0;
  for (let i = 0; i < config.eval.seeds; i++) {
    const episodes = await task.evaluate(engine, {
      seed: deriveSeed(EVAL_SEED_BASE, i),
      sampling: { temperature: config.eval.temperature, topP: config.eval.topP, topK: config.eval.topK, maxNewTokens: config.rollout.maxNewTokens },
      problems: config.eval.problems,
      policies,
    });
    problems = episodes.length;
    perSeed.push(episodes.length ? episodes.reduce((s, e) => s + e.outcome, 0) / episodes.length : 0);
  }
  return { score: perSeed.reduce((s, x) => s + x, 0) / Math.max(1, perSeed.length), perSeed, problems };
}

/** Every agent on the frozen base model (the untrained system). */
export function basePolicies(task: Task): Record<string, string> {
  return Object.fromEntries(task.agents.map((a) => [a, BASE_POLICY]));
}
