// Scores of a team on a set of episodes: accuracy (the team reward), how often the Planner's plan
// was right, and how often the Solver's answer followed the plan it was given.
import type { Episode } from '../workflow/index.ts';
import type { ArithInfo } from '../tasks/arith-duo/arith-env.ts';

export interface TeamScore {
  /** Mean episode outcome: the fraction of problems whose final answer is right. */
  score: number;
  rightPlanRate: number;
  followRate: number;
  problems: number;
}

export function teamScore(episodes: Episode[]): TeamScore {
  const n = Math.max(1, episodes.length);
  const info = episodes.map((e) => e.info as ArithInfo);
  return {
    score: episodes.reduce((s, e) => s + e.outcome, 0) / n,
    rightPlanRate: info.filter((i) => i.rightPlan).length / n,
    followRate: info.filter((i) => i.followedPlan).length / n,
    problems: episodes.length,
  };
}
