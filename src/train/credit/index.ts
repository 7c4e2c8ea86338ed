// Advantage estimators by name: an algorithm plan names one (src/train/types.ts, `advantage`), or
// brings its own estimator object (MAS-OPD's teacher-scored one, src/opd/teacher-estimator.ts).
import type { AdvantageEstimator, AdvantageEstimatorRef } from '../types.ts';
import { gaeAction, gaeToken } from './gae-estimators.ts';
import { groupRelativeNoStd, groupRelativeWithStd } from './group-relative.ts';
import { returnToGoMinusGroupMean } from './return-to-go-group-mean.ts';

export const ADVANTAGE_ESTIMATORS = {
  'gae-action': gaeAction,
  'gae-token': gaeToken,
  'group-relative': groupRelativeWithStd,
  'group-relative-no-std': groupRelativeNoStd,
  'return-to-go-group-mean': returnToGoMinusGroupMean,
} satisfies Record<string, AdvantageEstimator>;

export type AdvantageEstimatorName = keyof typeof ADVANTAGE_ESTIMATORS;
export type { AdvantageEstimator, CreditContext } from '../types.ts';

/** The estimator a plan refers to: its own object, or the registered one of that name. */
export function estimatorOf(ref: AdvantageEstimatorRef): AdvantageEstimator {
  if (typeof ref !== 'string') return ref;
  const estimator = (ADVANTAGE_ESTIMATORS as Record<string, AdvantageEstimator>)[ref];
  if (!estimator) throw new Error(`unknown advantage estimator '${ref}' (known: ${Object.keys(ADVANTAGE_ESTIMATORS).join(', ')})`);
  return estimator;
}

/** The name a plan's estimator goes by in metrics and messages. */
export function estimatorName(ref: AdvantageEstimatorRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}
