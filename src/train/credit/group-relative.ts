// GRPO's estimator: each response is compared with the other responses of its group, and the
// normalised difference is the advantage of every one of its tokens (no critic, no bootstrap).
//
//   A_i = (r_i − mean_g) / (std_g + eps)      (group-relative; std is the population std)
//   A_i =  r_i − mean_g                       (group-relative-no-std: Dr. GRPO's "no std" variant)
//
// A response's group g is (EpisodeGroup, agent, turn): the same role's responses to the same
// problem at the same turn. With one agent and one turn that is GRPO's group of G answers; in a
// multi-agent workflow each role is compared only with itself (MAS+GRPO), and at later turns the
// members' histories differ (they are sibling episodes, not copies of one state). r_i is the
// action's credited reward (the plan's reward mode: broadcast = team + role-local).
// A group whose rewards are all equal gets advantage 0 everywhere (never NaN), and so does a
// group of one.
import { groupRelativeAdvantages } from '../../core/statistics.ts';
import type { TrainAction } from '../types.ts';
import { perUnit, type AdvantageEstimator } from './estimator.ts';

/** GRPO's group key of an action (see above). */
export function responseGroupKey(a: TrainAction): string {
  if (a.group === null) throw new Error(`action of agent '${a.agent}' in episode ${a.episode} has no episode group`);
  return JSON.stringify([a.group, a.agent, a.t]);
}

function groupRelative(scaleByStd: boolean): AdvantageEstimator {
  return {
    summary: scaleByStd ? 'GRPO: (r − group mean) / (group std + eps), per role and turn' : 'GRPO without std: r − group mean, per role and turn',
    needsCritic: false,
    needsGroups: true,
    levels: ['action', 'token'],
    assign(actions, { plan }) {
      const advantages_N = groupRelativeAdvantages(actions.map((a) => a.reward), actions.map(responseGroupKey), { scaleByStd });
      actions.forEach((a, n) => {
        a.advantages_K = perUnit(a, plan.level, advantages_N[n]!);
        a.returns_K = perUnit(a, plan.level, a.reward);
      });
    },
  };
}

export const groupRelativeWithStd = groupRelative(true);
export const groupRelativeNoStd = groupRelative(false);
