// Token-level GAE for MARFT (spec section 4): every generated token is an action, with two
// discounts — γ_w between the tokens of one agent action, γ_a between environment steps — and
// γ_agent (default 1: no discount) across an agent boundary inside a step. Intermediate token
// rewards are 0; an action's reward arrives at its last token.
//
//   inside an action (k → next token k'):  δ_k = γ_w·V_{k'} − V_k,               A_k = δ_k + γ_w·λ·A_{k'}
//   last token, next agent of the step:    δ   = r + γ_agent·V_next − V_k,        A   = δ + γ_agent·λ·A_next
//   last token, last agent of step t:      δ   = r + γ_a·(1−done_t)·V_next − V_k, A   = δ + γ_a·λ·(1−done_t)·A_next
// where V_next, A_next belong to the first token of the next action. returns = V + A.
//
// Masked tokens (mask_K[k] = 0: not sampled by the policy, e.g. padding) are not timesteps: the
// chain skips them, their values are never read, and their advantages and returns are 0.

export interface TokenAction {
  /** values_K[k]: the critic's value of the state before action token k. */
  values_K: ArrayLike<number>;
  /** 1 = a policy token that takes part in the chain; defaults to all ones. */
  mask_K?: ArrayLike<number>;
  /** Reward credited to the action, placed at its last unmasked token. */
  reward: number;
}

export interface TokenGaeInput {
  /** actions_TN[t][i]: the i-th action (execution order) of environment step t. */
  actions_TN: TokenAction[][];
  dones_T: boolean[];
  /** Value of the first token of the step after the buffer when the last step is not done; 0 otherwise. */
  bootstrapValue?: number;
  /** γ_a: discount between environment steps. */
  gammaStep: number;
  /** γ_w: discount between tokens of one action (the paper: 1). */
  gammaToken: number;
  /** Discount across an agent boundary inside a step (the paper: 1). */
  gammaAgent: number;
  lambda: number;
}

export interface TokenGaeOutput {
  advantages_TN: Float64Array[][];
  returns_TN: Float64Array[][];
}

export function tokenLevelGae(input: TokenGaeInput): TokenGaeOutput {
  const { actions_TN, dones_T, gammaStep, gammaToken, gammaAgent, lambda } = input;
  if (dones_T.length !== actions_TN.length) throw new Error('tokenLevelGae: one done flag per step');
  const advantages_TN = actions_TN.map((step) => step.map((a) => new Float64Array(a.values_K.length)));
  const returns_TN = actions_TN.map((step) => step.map((a) => new Float64Array(a.values_K.length)));
  // Value and advantage of the first unmasked token after the current position.
  let nextValue = input.bootstrapValue ?? 0;
  let nextAdvantage = 0;
  for (let t = actions_TN.length - 1; t >= 0; t--) {
    const step = actions_TN[t]!;
    const notDone = dones_T[t] ? 0 : 1;
    // Discount from the end of the next action to be visited (backwards) to what follows it.
    let boundaryDiscount = gammaStep * notDone;
    for (let i = step.length - 1; i >= 0; i--) {
      const { values_K, mask_K, reward } = step[i]!;
      const adv = advantages_TN[t]![i]!;
      const ret = returns_TN[t]![i]!;
      let isLast = true;
      for (let k = values_K.length - 1; k >= 0; k--) {
        if (mask_K && mask_K[k] === 0) continue;
        const v = values_K[k]!;
        let a: number;
        if (isLast) {
          a = reward + boundaryDiscount * nextValue - v + boundaryDiscount * lambda * nextAdvantage;
          isLast = false;
        } else {
          a = gammaToken * nextValue - v + gammaToken * lambda * nextAdvantage;
        }
        adv[k] = a;
        ret[k] = v + a;
        nextValue = v;
        nextAdvantage = a;
      }
      // An action without unmasked tokens is transparent: what follows it keeps its discount.
      if (!isLast) boundaryDiscount = gammaAgent;
    }
  }
  return { advantages_TN, returns_TN };
}
