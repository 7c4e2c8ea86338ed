// The check that the sampling server serves what the training engine trains: after each adapter
// version is loaded, a small fixed batch of sequences is scored by both (the training engine's
// forward, vLLM's prompt_logprobs) and the run stops with one line naming the adapter, the version
// and the largest difference when they disagree beyond the tolerance. It catches a wrongly written
// or wrongly read adapter, a server serving another base, or an unloaded name silently falling back,
// before any episode is sampled from the wrong policy.
import type { PolicyTarget, SamplingEngine, ScoreRequest } from '../types.ts';
import { mulberry32 } from '../../core/rng.ts';

/** The check's fixed batch: `count` sequences of `length` token ids drawn from a seeded generator, scored from position 1. */
export function consistencyBatch(vocabSize: number, count = 2, length = 16, seed = 1): ScoreRequest[] {
  const next = mulberry32(seed);
  return Array.from({ length: count }, () => ({ tokens: Array.from({ length }, () => Math.floor(next() * vocabSize)), scoreFrom: 1 }));
}

export class SamplerMismatchError extends Error {
  constructor(message: string, readonly maxDifference: number) {
    super(message);
    this.name = 'SamplerMismatchError';
  }
}

/** The largest |trainer − sampler| log-prob over the batch (both unscaled). */
export async function maxLogprobDifference(trainer: SamplingEngine, trainerTarget: PolicyTarget, sampler: SamplingEngine, samplerTarget: PolicyTarget, batch: ScoreRequest[]): Promise<number> {
  const [a, b] = [await trainer.score(trainerTarget, batch), await sampler.score(samplerTarget, batch)];
  let diff = 0;
  a.forEach((row, i) => row.forEach((x, k) => {
    const d = Math.abs(x - b[i]![k]!);
    diff = Number.isNaN(d) ? Infinity : Math.max(diff, d);
  }));
  return diff;
}

/** Throws SamplerMismatchError (one line) when the difference exceeds `tolerance`; returns the difference. */
export async function checkServedAdapter(o: {
  trainer: SamplingEngine; sampler: SamplingEngine; adapter: string; version: number; served: string; batch: ScoreRequest[]; tolerance: number; toleranceKey: string;
}): Promise<number> {
  const diff = await maxLogprobDifference(o.trainer, { kind: 'adapter', name: o.adapter }, o.sampler, { kind: 'adapter', name: o.served }, o.batch);
  if (!(diff <= o.tolerance)) {
    throw new SamplerMismatchError(`vLLM serves adapter '${o.adapter}' version ${o.version} (${o.served}) differently from the training engine: max |Δ log-prob| ${diff.toPrecision(3)} > tolerance ${o.tolerance} (${o.toleranceKey}) over ${o.batch.length} fixed sequences; sampling stopped`, diff);
  }
  return diff;
}
