// The contract of an advantage estimator: given the step's training actions (rewards placed per
// the plan, old values filled when the plan has a critic), fill every action's advantages_K and
// returns_K with one entry per objective unit (1 at the action level, L at the token level).
import type { AlgorithmPlan, CreditLevel } from '../../algorithms/types.ts';
import type { MarftConfig } from '../../config/schema.ts';
import type { Episode } from '../../workflow/trajectory.ts';
import type { Task } from '../task.ts';
import type { TrainAction } from '../batch.ts';

export interface CreditContext {
  episodes: Episode[];
  plan: AlgorithmPlan;
  config: MarftConfig;
  /** The task, for estimators that score combinations of actions (Task.scoreJoint). */
  task?: Pick<Task, 'scoreJoint'>;
}

export interface AdvantageEstimator {
  readonly summary: string;
  /** Reads the critic's old values (values_K): the plan must have a critic, and only then. */
  readonly needsCritic: boolean;
  /** Compares episodes within their EpisodeGroup: the plan must sample groups. */
  readonly needsGroups: boolean;
  /** Objective levels it fills units for. */
  readonly levels: readonly CreditLevel[];
  assign(actions: TrainAction[], context: CreditContext): void;
}

/** One value per unit of the action: 1 at the action level, one per token at the token level. */
export function perUnit(a: TrainAction, level: CreditLevel, x: number): Float64Array {
  return new Float64Array(level === 'action' ? 1 : a.length).fill(x);
}
