// A step that runs out of memory (the batch does not fit: the key/value cache of the sampled
// sequences, the activations of a micro-batch) ends the run in one line naming the step, what the
// engine reported and the keys that size the work, instead of a stack trace. Nothing of the step is
// kept: it failed before its metrics were logged or checkpointed, so the run resumes from its last
// checkpoint, with smaller settings (--set, a configuration change recorded in config-changes.jsonl).
import type { MarftConfig } from '../config/schema.ts';
import { RunError } from './run-errors.ts';

/** A step that ran out of memory; the run's checkpoints are intact. */
export class MemoryExhaustedError extends RunError {
  override name = 'MemoryExhaustedError';
  constructor(readonly step: number, message: string) {
    super(message);
  }
}

/**
 * How each engine reports an allocation that failed: V8's typed arrays (the embedded and tabular
 * engines; a buffer of a billion elements or more is past V8's largest), PyTorch on a GPU and on the
 * CPU, Python itself (the torch worker's replies carry its text).
 */
const OUT_OF_MEMORY = /Array buffer allocation failed|Invalid typed array length: \d{10,}|CUDA out of memory|OutOfMemoryError|DefaultCPUAllocator: can't allocate memory|Cannot allocate memory|\bMemoryError\b|out of memory/i;

/** Whether `err` reports an allocation that failed. */
export const isOutOfMemory = (err: unknown): boolean => err instanceof Error && OUT_OF_MEMORY.test(err.message);

/** The first line of what the engine said, short enough for the one line. */
const gist = (err: Error): string => {
  const first = err.message.split('\n').find((l) => OUT_OF_MEMORY.test(l)) ?? err.message.split('\n')[0]!;
  return first.length > 160 ? `${first.slice(0, 157)}...` : first;
};

/** The one-line error of step `step` running out of memory with `config`'s batch. */
export function memoryError(step: number, config: MarftConfig, err: Error): MemoryExhaustedError {
  const { rollout, train } = config;
  return new MemoryExhaustedError(step, `step ${step} ran out of memory (${gist(err)}): the configured batch does not fit; ` +
    `lower train.microBatchTokens (now ${train.microBatchTokens}: the tokens of one forward and backward pass), ` +
    `rollout.batchSize (now ${rollout.batchSize}) × rollout.rolloutsPerPrompt (now ${rollout.rolloutsPerPrompt}) or rollout.maxNewTokens (now ${rollout.maxNewTokens}); nothing of this step was kept`);
}

/**
 * The one line for work outside a training step that ran out of memory (an evaluation before or after
 * training, `marft eval`, serving): what the engine said and the settings that size the work.
 */
export function outOfMemoryLine(err: Error): string {
  return `ran out of memory (${gist(err)}): the work does not fit in this machine's memory; lower the sequences sampled at once ` +
    `(rollout.batchSize × rollout.rolloutsPerPrompt, eval.problems), their length (rollout.maxNewTokens) or train.microBatchTokens, ` +
    `or use a machine with more memory (MARFT_MEMORY_LIMIT_MB=off skips the embedded engine's check)`;
}
