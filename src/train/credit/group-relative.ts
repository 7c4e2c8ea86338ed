// GRPO's estimator: each response is compared with the other responses of its group, and the
// normalised difference is the advantage of every one of its tokens (no critic, no bootstrap).
//
//   A_i = (r_i − mean_g) / (std_g + eps)      (group-relative; std per the plan's groupDeviation:
//                                             population by default, unbiased for AT-GRPO)
//   A_i =  r_i − mean_g                       (group-relative-no-std: Dr. GRPO's "no std" variant)
//
// A response's group g is set by the plan's groupKey:
//   role       (EpisodeGroup, role): the same role's responses to the same problem, every turn
//              together. MAS+GRPO as the MAS-OPD paper defines it (no turn-wise grouping: that is
//              AT-GRPO's contribution); with one agent and one turn, GRPO's group of G answers.
//   role-turn  (EpisodeGroup, agent, turn): only the responses of the same turn (AT-GRPO's
//              (problem, turn, agent); CURE, whose episodes have one turn; grpo with
//              advantage.groupBy: role-turn). At later turns the members' histories differ (they
//              are sibling episodes, not copies of one state).
// For GRPO a role is its agent (the plan names no roles). r_i is the action's credited reward (the
// plan's reward mode: broadcast = team + role-local).
// A group whose rewards are all equal gets advantage 0 everywhere (never NaN), and so does a
// group of one.
import { groupRelativeAdvantages } from '../../core/statistics.ts';
import type { AlgorithmPlan, TrainAction } from '../types.ts';
import { perUnit, type AdvantageEstimator } from './estimator.ts';

function episodeGroup(a: TrainAction): string {
  if (a.group === null) throw new Error(`action of agent '${a.agent}' in episode ${a.episode} has no episode group`);
  return a.group;
}

/** AT-GRPO's group key of an action, (EpisodeGroup, agent, turn): groupKey role-turn. */
export function responseGroupKey(a: TrainAction): string {
  return JSON.stringify([episodeGroup(a), a.agent, a.t]);
}

/** MAS+GRPO's group key of an action, (EpisodeGroup, role): groupKey role. */
export function roleGroupKey(a: TrainAction): string {
  return JSON.stringify([episodeGroup(a), a.role]);
}

/** The group key a plan compares responses by (default role-turn). */
export function groupKeyOf(plan: Pick<AlgorithmPlan, 'groupKey'>): (a: TrainAction) => string {
  return (plan.groupKey ?? 'role-turn') === 'role' ? roleGroupKey : responseGroupKey;
}

function groupRelative(scaleByStd: boolean): AdvantageEstimator {
  return {
    summary: scaleByStd ? 'GRPO: (r − group mean) / (group std + eps), per role (and turn, per the plan)' : 'GRPO without std: r − group mean, per role (and turn, per the plan)',
    needsCritic: false,
    needsGroups: true,
    levels: ['action', 'token'],
    assign(actions, { plan }) {
      const advantages_N = groupRelativeAdvantages(actions.map((a) => a.reward), actions.map(groupKeyOf(plan)), { scaleByStd, deviation: plan.groupDeviation ?? 'population' });
      actions.forEach((a, n) => {
        a.advantages_K = perUnit(a, plan.level, advantages_N[n]!);
        a.returns_K = perUnit(a, plan.level, a.reward);
      });
    },
  };
}

export const groupRelativeWithStd = groupRelative(true);
export const groupRelativeNoStd = groupRelative(false);
