// How an adapter's loss averages over its units in one minibatch (src/train/types.ts, Aggregation).
// The weights multiply each unit's term of the objective, so the loss is a weighted sum and its
// gradient with respect to each log-prob is that unit's weight times its own term's.
//
//   unit-mean             w = 1 / (the adapter's units in the minibatch): its actions at the action
//                         level, its tokens at the token level (the RL algorithms' token-mean or
//                         action-mean)
//   role-turn-token-mean  w = 1 / (R · N_r · L): R roles in the minibatch, N_r responses of the unit's
//                         role r in it, L tokens of the unit's response. The mean over a response's
//                         tokens, then over a role's responses, then over roles (MAS-OPD's Eq. 13 with
//                         the turns of a role pooled across the minibatch's episodes), so each role
//                         counts once whatever its number of responses, and the adapters' losses add
//                         up to that one mean. Counted over the whole minibatch, every adapter's.
import type { Aggregation, CreditLevel, TrainAction } from '../types.ts';

/** The weight of each unit of `group` (one adapter's actions in minibatch `minibatch`), as a function of its action. */
export function unitWeights(group: readonly TrainAction[], minibatch: readonly TrainAction[], level: CreditLevel, aggregation: Aggregation): (a: TrainAction) => number {
  if (aggregation === 'unit-mean') {
    const w = level === 'action' ? 1 / group.length : 1 / group.reduce((s, a) => s + a.length, 0);
    return () => w;
  }
  if (level !== 'token') throw new Error(`aggregation ${aggregation} averages over tokens: it needs token-level units`);
  const perRole = new Map<string, number>();
  for (const a of minibatch) if (a.length > 0) perRole.set(a.role, (perRole.get(a.role) ?? 0) + 1);
  const roles = perRole.size;
  return (a) => {
    const count = perRole.get(a.role);
    if (!count) throw new Error(`role ${a.role} has no response in its minibatch`);
    return 1 / (roles * count * a.length);
  };
}
