// The trainer's guard against divergence (src/runs/divergence.ts): each step's metrics and the live
// parameters are checked finite before the step is logged as good or checkpointed; an error thrown
// inside a step while the parameters are no longer finite (the sampler refusing NaN logits) is
// reported as the divergence it is, and one raised by an allocation that failed as running out of
// memory (./memory-errors.ts); a checkpoint whose parameters are not finite is not written.
import type { Engine } from '../engine/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import { divergenceError, nonFiniteMetric, sideOf } from './divergence.ts';
import { NonFiniteStateError } from '../engine/index.ts';
import { nonFiniteParameters } from './finite-guard.ts';
import { isOutOfMemory, memoryError } from './memory-errors.ts';
import type { StepMetrics } from './metrics-log.ts';
import { RunError, type DivergenceError } from './run-errors.ts';

export interface Trainables {
  adapters: readonly string[];
  critics: readonly string[];
}

/**
 * Runs step `step`; an allocation that failed becomes that step's MemoryExhaustedError, and an error
 * raised while the parameters are not finite its DivergenceError.
 */
export async function guardedStep<T>(step: number, config: MarftConfig, engine: Engine, trainables: Trainables, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof RunError) throw err;
    // The batch is too large for this machine. The run stops either way (the live parameters may be
    // part-updated); a resume starts from the last checkpoint, with a smaller batch.
    if (isOutOfMemory(err)) throw memoryError(step, config, err as Error);
    const bad = await nonFiniteParameters(engine, trainables.adapters, trainables.critics).catch(() => null);
    if (bad) throw divergenceError(step, config, `the parameters of ${bad}`, sideOf(bad), undefined, true);
    throw err;
  }
}

/** The DivergenceError of a step whose metrics or live parameters are not finite, or null. */
export async function stepDivergence(step: number, m: StepMetrics, config: MarftConfig, engine: Engine, trainables: Trainables): Promise<DivergenceError | null> {
  const metric = nonFiniteMetric(m);
  if (metric) return divergenceError(step, config, metric.what, metric.side, metric.value, metric.plural);
  const bad = await nonFiniteParameters(engine, trainables.adapters, trainables.critics);
  return bad ? divergenceError(step, config, `the parameters of ${bad}`, sideOf(bad), undefined, true) : null;
}

/** Runs a checkpoint save; parameters found not finite while saving become step `step`'s DivergenceError. */
export async function finiteCheckpoint(step: number, config: MarftConfig, save: () => Promise<string>): Promise<string> {
  try {
    return await save();
  } catch (err) {
    if (err instanceof NonFiniteStateError) throw divergenceError(step, config, `the parameters of ${err.what}`, sideOf(err.what), undefined, true);
    throw err;
  }
}
