// Advantage estimators and losses by name (verl style), so algorithms and configurations refer to
// them as strings. Shapes: _N per unit (action or token), _K per token of one action, _TN ragged
// [step][agent]; each function's file documents its formula.
import { groupRelativeAdvantages } from './batch-normalisation.ts';
import { actionLevelGae } from './gae-action.ts';
import { tokenLevelGae } from './gae-token.ts';
import { k3KlLoss } from './losses/k3-kl.ts';
import { policyGradientLoss } from './losses/policy-gradient.ts';
import { ppoClipLoss } from './losses/ppo-clip.ts';
import { valueLoss } from './losses/value-loss.ts';

export const ADVANTAGE_ESTIMATORS = {
  /** MARFT action level: rewards_TN, values_TN, dones_T → advantages_TN, returns_TN. */
  'gae-action': actionLevelGae,
  /** MARFT token level: actions_TN of {values_K, reward}, dones_T → advantages_TN[t][i]_K, returns. */
  'gae-token': tokenLevelGae,
  /** GRPO: rewards_N, groupIds_N → advantages_N. */
  grpo: groupRelativeAdvantages,
} as const;

export const POLICY_LOSSES = {
  /** logprobs_N, proximalLogprobs_N, advantages_N, weights_N (+ behaviourLogprobs_N) → loss, dLogprobs_N. */
  'ppo-clip': ppoClipLoss,
  /** logprobs_N, advantages_N, weights_N → loss, dLogprobs_N. */
  'policy-gradient': policyGradientLoss,
} as const;

export const KL_LOSSES = {
  /** logprobs_K, refLogprobs_K, weights_K, coef → loss, kl, dLogprobs_K. */
  k3: k3KlLoss,
} as const;

export const VALUE_LOSSES = {
  /** values_N, oldValues_N, returns_N, weights_N, kind, clip → loss, dValues_N. */
  clipped: valueLoss,
} as const;

export type AdvantageEstimatorName = keyof typeof ADVANTAGE_ESTIMATORS;
export type PolicyLossName = keyof typeof POLICY_LOSSES;
export type KlLossName = keyof typeof KL_LOSSES;
