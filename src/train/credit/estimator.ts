// The contract of an advantage estimator is AdvantageEstimator (src/train/types.ts): given the
// step's training actions (rewards placed per the plan, old values filled when the plan has a
// critic), fill every action's advantages_K and returns_K with one entry per objective unit (1 at the
// action level, L at the token level). Here: what the estimators share.
import type { CreditLevel, TrainAction } from '../types.ts';

export type { AdvantageEstimator, CreditContext } from '../types.ts';

/** One value per unit of the action: 1 at the action level, one per token at the token level. */
export function perUnit(a: TrainAction, level: CreditLevel, x: number): Float64Array {
  return new Float64Array(level === 'action' ? 1 : a.length).fill(x);
}
