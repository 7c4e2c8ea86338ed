// The run's reward settings (the configuration's `reward` section) and what they make of the raw
// rewards a rollout records (src/workflow/trajectory.ts: each turn's team reward as the environment
// reported it, the episode's final outcome, each action's role-local reward). The rollout weighs and
// places nothing; ./batch.ts places rewards once per the plan, with these:
//
//   team reward of turn t   T_t = the episode's outcome (reward.team: outcome, spec section 3 and
//                           MAS-OPD App. D.4: "broadcast to every turn") or turn t's own result
//                           (turn); a tree's copy always its own turn's (a copy that does not
//                           continue has no outcome)
//   an action's share       T_t (reward.share: broadcast) or T_t / n_t over the turn's n_t recorded
//                           actions (split)
//   independent learner     α·share + w·local          (α = reward.teamWeight, w = reward.localWeight)
//   a turn, once            α·T_t + w·Σ local           (a joint chain's turn; a tree's copy rank)
import type { MarftConfig } from '../config/schema.ts';
import type { TurnScore } from '../workflow/joint-tree-sampling.ts';
import type { ActionRecord } from '../workflow/trajectory.ts';

export type RewardSettings = MarftConfig['reward'];

/** An action's role-local reward as the environment reported it (0 when it reported none). */
export const rawLocal = (a: Pick<ActionRecord, 'localReward'>): number => a.localReward ?? 0;

/** What an independent learner of the action's agent receives: α times its share of the turn's team reward, plus w times its local reward. */
export function learnerReward(settings: RewardSettings, teamReward: number, turnActions: number, a: Pick<ActionRecord, 'localReward'>): number {
  const share = settings.share === 'split' ? teamReward / Math.max(1, turnActions) : teamReward;
  return settings.teamWeight * share + settings.localWeight * rawLocal(a);
}

/** A turn's reward taken once: α times its team reward plus w times every local reward of its actions. */
export function turnReward(settings: RewardSettings, teamReward: number, actions: readonly Pick<ActionRecord, 'localReward'>[]): number {
  return settings.teamWeight * teamReward + settings.localWeight * actions.reduce((s, a) => s + rawLocal(a), 0);
}

/** How the tree samplers rank the copies of a turn under these settings (src/workflow/tree-sampling.ts, joint-tree-sampling.ts). */
export function turnScore(settings: RewardSettings): TurnScore {
  return (turn) => turnReward(settings, turn.teamReward, turn.actions);
}
