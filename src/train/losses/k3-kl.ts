// KL penalty against the frozen reference with the k3 estimator (Schulman's unbiased, always
// non-negative estimator of KL(π_θ || π_ref) from samples of π_θ), per token (App. B: coefficient 0.1).
//
//   x_k  = refLogprobs_K[k] − logprobs_K[k]
//   k3_k = exp(x_k) − 1 − x_k
//   loss = coef · Σ_k weights_K[k] · k3_k,   dloss/dlogprobs_K[k] = coef · weights_K[k] · (1 − exp(x_k))

export interface K3KlInput {
  logprobs_K: ArrayLike<number>;
  refLogprobs_K: ArrayLike<number>;
  weights_K: ArrayLike<number>;
  coef: number;
}

export interface K3KlOutput {
  /** coef · weighted k3. */
  loss: number;
  /** The weighted k3 itself (the KL metric, without the coefficient). */
  kl: number;
  dLogprobs_K: Float64Array;
}

export function k3KlLoss(input: K3KlInput): K3KlOutput {
  const { logprobs_K, refLogprobs_K, weights_K, coef } = input;
  const dLogprobs_K = new Float64Array(logprobs_K.length);
  let kl = 0;
  for (let k = 0; k < logprobs_K.length; k++) {
    const w = weights_K[k]!;
    if (w === 0) continue;
    const x = refLogprobs_K[k]! - logprobs_K[k]!;
    const ex = Math.exp(x);
    kl += w * (ex - 1 - x);
    dLogprobs_K[k] = coef * w * (1 - ex);
  }
  return { loss: coef * kl, kl, dLogprobs_K };
}

/** KL estimators by name: actor.klEstimator names one (src/config/choices.ts lists the names). */
export const KL_ESTIMATORS = { k3: k3KlLoss } as const;
