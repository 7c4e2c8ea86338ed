// How a step's training actions split into credit chains (the sequences one recursion runs over)
// and a chain into environment steps; shared by the reward scale (../batch.ts) and the GAE
// estimators (./estimators/gae.ts).
import type { AlgorithmPlan, TrainAction } from '../types.ts';
import type { Episode } from '../../workflow/trajectory.ts';

/** Chains of actions that share one recursion: a whole episode (joint) or one agent's actions of an episode. */
export function creditChains(actions: TrainAction[], plan: Pick<AlgorithmPlan, 'chain'>): TrainAction[][] {
  const byKey = new Map<string, TrainAction[]>();
  for (const a of actions) {
    const key = plan.chain === 'joint' ? `${a.episode}` : `${a.episode}/${a.agent}`;
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(a);
  }
  return [...byKey.values()];
}

/** Groups a chain's actions by environment step, in execution order; done flags from the episode. */
export function chainSteps(chain: TrainAction[], episodes: Episode[]): { steps: TrainAction[][]; dones_T: boolean[] } {
  const steps: TrainAction[][] = [];
  const dones_T: boolean[] = [];
  for (const a of chain) {
    if (steps.length === 0 || steps[steps.length - 1]![0]!.t !== a.t) {
      steps.push([]);
      dones_T.push(episodes[a.episode]!.steps.find((s) => s.t === a.t)?.done ?? true);
    }
    steps[steps.length - 1]!.push(a);
  }
  // An episode's last recorded step ends it (the runtime stops at termination or the horizon).
  if (dones_T.length > 0) dones_T[dones_T.length - 1] = true;
  return { steps, dones_T };
}
