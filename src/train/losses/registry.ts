// Losses by name (verl style), so algorithms and configurations refer to them as strings. Shapes:
// _N per unit (action or token), _K per token of one action; each function's file documents its
// formula. The advantage estimators' registry is ./estimators/index.ts, the policy objectives'
// ./losses/policy-objectives.ts (both re-exported here).
import { k3KlLoss } from './k3-kl.ts';
import { valueLoss } from './value-loss.ts';

export const KL_LOSSES = {
  /** logprobs_K, refLogprobs_K, weights_K, coef → loss, kl, dLogprobs_K. */
  k3: k3KlLoss,
} as const;

export const VALUE_LOSSES = {
  /** values_N, oldValues_N, returns_N, weights_N, kind, clip → loss, dValues_N. */
  clipped: valueLoss,
} as const;

export type KlLossName = keyof typeof KL_LOSSES;

export { ADVANTAGE_ESTIMATORS, type AdvantageEstimatorName } from '../credit/index.ts';
export { POLICY_LOSSES, type PolicyLossName } from './policy-objectives.ts';
