// Advantage estimators by name: an algorithm plan names one (src/algorithms/types.ts, `advantage`).
import { gaeAction, gaeToken } from './gae-estimators.ts';
import { groupRelativeNoStd, groupRelativeWithStd } from './group-relative.ts';
import { returnToGoMinusGroupMean } from './return-to-go-group-mean.ts';
import type { AdvantageEstimator } from './estimator.ts';

export const ADVANTAGE_ESTIMATORS = {
  'gae-action': gaeAction,
  'gae-token': gaeToken,
  'group-relative': groupRelativeWithStd,
  'group-relative-no-std': groupRelativeNoStd,
  'return-to-go-group-mean': returnToGoMinusGroupMean,
} satisfies Record<string, AdvantageEstimator>;

export type AdvantageEstimatorName = keyof typeof ADVANTAGE_ESTIMATORS;
export type { AdvantageEstimator, CreditContext } from './estimator.ts';
