// Action-level GAE for MARFT (spec section 4): every agent action is one timestep and the joint
// step is unrolled agent by agent, so the chain runs across agents inside an environment step,
// then across environment steps.
//
//   agent i < n_t:  δ_{t,i} = r_{t,i} + γ_agent·V_{t,i+1} − V_{t,i}
//                   A_{t,i} = δ_{t,i} + γ_agent·λ·A_{t,i+1}
//   last agent n_t: δ_{t,n} = r_{t,n} + γ·V_{t+1,1}·(1 − done_t) − V_{t,n}
//                   A_{t,n} = δ_{t,n} + γ·λ·(1 − done_t)·A_{t+1,1}
//   returns = V + A.
//
// The rollout buffer may hold several episodes back to back (auto-reset). `done_t` stops the
// bootstrap and the λ-chain from crossing an episode end; the first step after a reset starts a
// fresh chain of its own and is never cut (a defect of the reference code, spec section 4).
// Steps may have different numbers of agents (D may change per step), hence ragged arrays.

export interface ActionGaeInput {
  /** rewards_TN[t][i]: reward of the i-th action of environment step t (execution order). */
  rewards_TN: number[][];
  /** values_TN[t][i]: critic value of the state the i-th agent of step t acted in. */
  values_TN: number[][];
  /** dones_T[t]: the episode ended after step t. */
  dones_T: boolean[];
  /** Value of the first agent's state at step T (after the buffer) when the last step is not done; 0 otherwise. */
  bootstrapValue?: number;
  gamma: number;
  lambda: number;
  /** Discount between agents of one step: 1 = none across an agent boundary (the paper), γ = the reference code. */
  gammaAgent: number;
}

export interface ActionGaeOutput {
  advantages_TN: number[][];
  returns_TN: number[][];
}

export function actionLevelGae(input: ActionGaeInput): ActionGaeOutput {
  const { rewards_TN, values_TN, dones_T, gamma, lambda, gammaAgent } = input;
  const T = rewards_TN.length;
  if (values_TN.length !== T || dones_T.length !== T) throw new Error('actionLevelGae: rewards, values and dones need one entry per step');
  const advantages_TN: number[][] = rewards_TN.map((r) => new Array<number>(r.length).fill(0));
  const returns_TN: number[][] = rewards_TN.map((r) => new Array<number>(r.length).fill(0));
  // The first-agent value and advantage of step t+1, carried backwards.
  let nextValue = input.bootstrapValue ?? 0;
  let nextAdvantage = 0;
  for (let t = T - 1; t >= 0; t--) {
    const rewards = rewards_TN[t]!;
    const values = values_TN[t]!;
    const n = rewards.length;
    if (values.length !== n) throw new Error(`actionLevelGae: step ${t} has ${n} rewards but ${values.length} values`);
    if (n === 0) continue;
    const notDone = dones_T[t] ? 0 : 1;
    let a = 0;
    for (let i = n - 1; i >= 0; i--) {
      let delta: number;
      if (i === n - 1) {
        delta = rewards[i]! + gamma * nextValue * notDone - values[i]!;
        a = delta + gamma * lambda * notDone * nextAdvantage;
      } else {
        delta = rewards[i]! + gammaAgent * values[i + 1]! - values[i]!;
        a = delta + gammaAgent * lambda * a;
      }
      advantages_TN[t]![i] = a;
      returns_TN[t]![i] = values[i]! + a;
    }
    nextValue = values[0]!;
    nextAdvantage = a;
  }
  return { advantages_TN, returns_TN };
}
