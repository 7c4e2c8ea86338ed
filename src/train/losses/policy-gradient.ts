// Plain policy gradient / REINFORCE (MAGRPO, on-policy distillation, the trajectory-level variant
// without clipping): the advantage is a constant (stop-gradient) multiplying the log-prob.
//
//   loss = −Σ_i weights_N[i] · A_i · logprobs_N[i],   dloss/dlogprobs_N[i] = −weights_N[i] · A_i
//
// When another engine sampled the units (sampler.engine: vllm), its log-probs μ are not the
// trainer's, so each unit is weighted by the truncated importance weight of the sampler mismatch,
// held constant (a stop-gradient, like A):
//
//   c_i  = min(exp(oldLogprobs_N[i] − behaviourLogprobs_N[i]), cap)
//   loss = −Σ_i weights_N[i] · c_i · A_i · logprobs_N[i],   dloss/dlogprobs_N[i] = −weights_N[i] · c_i · A_i
//
// oldLogprobs_N are the trainer's log-probs of the sampled tokens under the weights the sampler
// drew from (before this step's first update), so c_i measures only the engines' disagreement.
// Without `mismatch` the sum is the authors' plain REINFORCE, computed exactly as before.

import { importanceWeightedPgLoss } from './importance-weighted-pg.ts';

export interface PolicyGradientInput {
  logprobs_N: ArrayLike<number>;
  advantages_N: ArrayLike<number>;
  weights_N: ArrayLike<number>;
  /** The sampler is a separate engine: its log-probs, the trainer's old ones and the weight's cap. */
  mismatch?: { oldLogprobs_N: ArrayLike<number>; behaviourLogprobs_N: ArrayLike<number>; cap: number };
}

export interface PolicyGradientOutput {
  loss: number;
  dLogprobs_N: Float64Array;
  /** Weighted mean of c_i (1 without `mismatch`). */
  meanImportanceWeight: number;
  /** Weighted fraction of units whose c_i hit the cap (0 without `mismatch`). */
  cappedFraction: number;
}

export function policyGradientLoss(input: PolicyGradientInput): PolicyGradientOutput {
  const { logprobs_N, advantages_N, weights_N, mismatch } = input;
  if (mismatch) {
    const { oldLogprobs_N, behaviourLogprobs_N, cap } = mismatch;
    return importanceWeightedPgLoss({ logprobs_N, behaviourLogprobs_N, ratioLogprobs_N: oldLogprobs_N, advantages_N, weights_N, cap });
  }
  const dLogprobs_N = new Float64Array(logprobs_N.length);
  let loss = 0;
  for (let i = 0; i < logprobs_N.length; i++) {
    const w = weights_N[i]!;
    if (w === 0) continue;
    loss -= w * advantages_N[i]! * logprobs_N[i]!;
    dLogprobs_N[i] = -w * advantages_N[i]!;
  }
  return { loss, dLogprobs_N, meanImportanceWeight: 1, cappedFraction: 0 };
}
