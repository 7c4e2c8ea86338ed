// How an adapter's loss averages over its units in one minibatch (src/train/types.ts, Aggregation).
// The weights multiply each unit's term of the objective, so the loss is a weighted sum and its
// gradient with respect to each log-prob is that unit's weight times its own term's.
//
//   unit-mean             w = 1 / (the adapter's units in the minibatch): its actions at the action
//                         level, its tokens at the token level (the RL algorithms' token-mean or
//                         action-mean)
//   role-trajectory-turn-token-mean
//                         MAS-OPD's Eq. 13 (the issue-19 reading: tokens, then role i's turns within
//                         each trajectory, then roles, so long trajectories do not dominate):
//                           L = −(1/R) Σ_r (1/|E_r|) Σ_{e ∈ E_r} (1/N_{r,e}) Σ_{responses y of r in e}
//                                 (1/L_y) Σ_k sg(A_k)·log π(y_k)
//                         R roles with a response in the minibatch, E_r the minibatch's trajectories
//                         (episodes) where role r has a response, N_{r,e} the responses of role r in
//                         trajectory e (its turns; with several agents of a role, all of theirs),
//                         L_y the response's tokens; so w = 1 / (R · |E_r| · N_{r,e} · L_y). A
//                         4-turn and a 1-turn trajectory of a role weigh the same.
//   role-turn-token-mean  w = 1 / (R · N_r · L_y): N_r the responses of role r in the whole minibatch
//                         (Eq. 13 with the turns of a role pooled across the minibatch's trajectories,
//                         opd.turnWeighting: pooled; a 4-turn trajectory weighs 4× a 1-turn one).
// Both MAS-OPD weightings count each role once whatever its number of responses, and the adapters'
// losses add up to that one mean. Counted over the whole minibatch, every adapter's.
import type { Aggregation, CreditLevel, TrainAction } from '../types.ts';

/** The weight of each unit of `group` (one adapter's actions in minibatch `minibatch`), as a function of its action. */
export function unitWeights(group: readonly TrainAction[], minibatch: readonly TrainAction[], level: CreditLevel, aggregation: Aggregation): (a: TrainAction) => number {
  if (aggregation === 'unit-mean') {
    const w = level === 'action' ? 1 / group.length : 1 / group.reduce((s, a) => s + a.length, 0);
    return () => w;
  }
  if (level !== 'token') throw new Error(`aggregation ${aggregation} averages over tokens: it needs token-level units`);
  const scored = minibatch.filter((a) => a.length > 0);
  const roles = new Set(scored.map((a) => a.role)).size;
  const missing = (a: TrainAction) => new Error(`role ${a.role} has no response in its minibatch`);
  if (aggregation === 'role-turn-token-mean') {
    const perRole = new Map<string, number>();
    for (const a of scored) perRole.set(a.role, (perRole.get(a.role) ?? 0) + 1);
    return (a) => {
      const count = perRole.get(a.role);
      if (!count) throw missing(a);
      return 1 / (roles * count * a.length);
    };
  }
  // role-trajectory-turn-token-mean: N_{r,e} per (role, episode), |E_r| per role.
  const perRoleEpisode = new Map<string, number>();
  const episodesOfRole = new Map<string, Set<number>>();
  const key = (a: TrainAction) => JSON.stringify([a.role, a.episode]);
  for (const a of scored) {
    perRoleEpisode.set(key(a), (perRoleEpisode.get(key(a)) ?? 0) + 1);
    const episodes = episodesOfRole.get(a.role) ?? new Set<number>();
    episodes.add(a.episode);
    episodesOfRole.set(a.role, episodes);
  }
  return (a) => {
    const turns = perRoleEpisode.get(key(a));
    const trajectories = episodesOfRole.get(a.role)?.size;
    if (!turns || !trajectories) throw missing(a);
    return 1 / (roles * trajectories * turns * a.length);
  };
}
