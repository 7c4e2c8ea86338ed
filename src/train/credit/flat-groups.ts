// AT-GRPO's optional filter: a group whose rewards are all equal (zero range) carries no signal
// (its advantages are exactly 0) and, left in, only dilutes the token mean of the loss and adds KL
// terms. flatGroups finds those groups; the trainer leaves their actions out of the policy update
// when the plan says so (advantage.dropFlatGroups).
import type { TrainAction } from '../types.ts';

export interface FlatGroups {
  /** Actions of the flat groups. */
  actions: Set<TrainAction>;
  flat: number;
  groups: number;
}

export function flatGroups(actions: readonly TrainAction[], key: (a: TrainAction) => string): FlatGroups {
  const byKey = new Map<string, TrainAction[]>();
  for (const a of actions) {
    const k = key(a);
    const g = byKey.get(k);
    if (g) g.push(a);
    else byKey.set(k, [a]);
  }
  const out: FlatGroups = { actions: new Set(), flat: 0, groups: byKey.size };
  for (const g of byKey.values()) {
    // Exact equality: the group-relative estimator gives such a group exactly 0.
    if (g.every((a) => a.reward === g[0]!.reward)) {
      out.flat++;
      for (const a of g) out.actions.add(a);
    }
  }
  return out;
}
