// Importance-weighted policy gradient: REINFORCE on samples from a behaviour policy μ, each unit
// weighted by the truncated ratio c_i = min(π/μ, cap) held constant (no clipping, no proximal
// policy). On-policy (π = μ) it is exactly ./policy-gradient.ts.
//
//   c_i   = min(exp(ratioLogprobs_N[i] − behaviourLogprobs_N[i]), cap)   (stop-gradient;
//           ratioLogprobs_N defaults to logprobs_N, the current policy)
//   c_i   = 1 when `onPolicy`: the parameters being updated are the ones that sampled (a step's
//           first pass on the trainer's own samples), so π = μ by definition; recomputed log-probs
//           would only add the engines' rounding to a ratio that is exactly 1
//   loss  = −Σ_i weights_N[i] · c_i · A_i · logprobs_N[i]
//   dloss/dlogprobs_N[i] = −weights_N[i] · c_i · A_i

export interface ImportanceWeightedPgInput {
  logprobs_N: ArrayLike<number>;
  behaviourLogprobs_N: ArrayLike<number>;
  advantages_N: ArrayLike<number>;
  weights_N: ArrayLike<number>;
  cap: number;
  /** π = μ by definition (see above): every c_i is 1. */
  onPolicy?: boolean;
  /** The log-probs the ratio's numerator is taken from, when not the current ones (policy-gradient's sampler mismatch: the trainer's old log-probs). */
  ratioLogprobs_N?: ArrayLike<number>;
}

export function importanceWeightedPgLoss(input: ImportanceWeightedPgInput): { loss: number; dLogprobs_N: Float64Array; meanImportanceWeight: number; cappedFraction: number } {
  const { logprobs_N, behaviourLogprobs_N, advantages_N, weights_N, cap } = input;
  const ratioLogprobs_N = input.ratioLogprobs_N ?? logprobs_N;
  const dLogprobs_N = new Float64Array(logprobs_N.length);
  let loss = 0;
  let iwSum = 0;
  let capped = 0;
  let weightSum = 0;
  for (let i = 0; i < logprobs_N.length; i++) {
    const w = weights_N[i]!;
    if (w === 0) continue;
    const raw = input.onPolicy ? 1 : Math.exp(ratioLogprobs_N[i]! - behaviourLogprobs_N[i]!);
    const c = Math.min(raw, cap);
    if (!input.onPolicy && raw >= cap) capped += w;
    loss -= w * c * advantages_N[i]! * logprobs_N[i]!;
    dLogprobs_N[i] = -w * c * advantages_N[i]!;
    iwSum += w * c;
    weightSum += w;
  }
  const norm = weightSum > 0 ? weightSum : 1;
  return { loss, dLogprobs_N, meanImportanceWeight: weightSum > 0 ? iwSum / norm : 1, cappedFraction: capped / norm };
}
