// Plain policy gradient / REINFORCE (MAGRPO, on-policy distillation, the trajectory-level variant
// without clipping): the advantage is a constant (stop-gradient) multiplying the log-prob.
//
//   loss = −Σ_i weights_N[i] · A_i · logprobs_N[i],   dloss/dlogprobs_N[i] = −weights_N[i] · A_i

export interface PolicyGradientInput {
  logprobs_N: ArrayLike<number>;
  advantages_N: ArrayLike<number>;
  weights_N: ArrayLike<number>;
}

export function policyGradientLoss(input: PolicyGradientInput): { loss: number; dLogprobs_N: Float64Array } {
  const { logprobs_N, advantages_N, weights_N } = input;
  const dLogprobs_N = new Float64Array(logprobs_N.length);
  let loss = 0;
  for (let i = 0; i < logprobs_N.length; i++) {
    const w = weights_N[i]!;
    if (w === 0) continue;
    loss -= w * advantages_N[i]! * logprobs_N[i]!;
    dLogprobs_N[i] = -w * advantages_N[i]!;
  }
  return { loss, dLogprobs_N };
}
