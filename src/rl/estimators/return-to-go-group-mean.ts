// MAGRPO's estimator: a joint sample (every agent's action at one turn of one episode) earns the
// turn's joint reward r_t (the sum of the rewards placed on that turn's actions: with step-end
// placement, the team reward once plus the role-local rewards); its Monte-Carlo return-to-go is
//
//   G_t = r_t + γ·G_{t+1}   (G after the episode's last turn = 0)
//
// and its advantage is G_t minus the mean G_t of its node's joint samples, without dividing by a
// standard deviation. A node is (EpisodeGroup, turn): the G aligned joint samples of one problem
// at turn t (the i-th samples of every agent form the i-th joint sample, since they are the
// actions of the i-th episode). Every agent's action of a joint sample gets the same advantage.
// At turns after the first the node's samples descend from different histories (sibling
// episodes, not branches of one state): see docs/algorithms.md.
import { groupBy } from '../scoring.ts';
import type { TrainAction } from '../train-batch.ts';
import { perUnit, type AdvantageEstimator } from './types.ts';

export const returnToGoMinusGroupMean: AdvantageEstimator = {
  summary: 'MAGRPO: per-turn Monte-Carlo return-to-go minus the mean over the node’s joint samples, shared by the agents',
  needsCritic: false,
  needsGroups: true,
  levels: ['action', 'token'],
  assign(actions, { plan, config }) {
    const gamma = config.advantage.gamma;
    // Joint samples: the actions of one episode at one turn.
    const joint = [...groupBy(actions, (a) => `${a.episode}/${a.t}`).values()];
    const returnOf = new Map<TrainAction[], number>();
    for (const episode of groupBy(joint, (j) => `${j[0]!.episode}`).values()) {
      const turns = [...episode].sort((x, y) => x[0]!.t - y[0]!.t);
      let g = 0;
      for (let k = turns.length - 1; k >= 0; k--) {
        // Discounted per turn elapsed, so a turn with no kept action still counts.
        const gap = k + 1 < turns.length ? turns[k + 1]![0]!.t - turns[k]![0]!.t : 0;
        g = turns[k]!.reduce((s, a) => s + a.reward, 0) + gamma ** gap * g;
        returnOf.set(turns[k]!, g);
      }
    }
    for (const node of groupBy(joint, (j) => {
      if (j[0]!.group === null) throw new Error(`episode ${j[0]!.episode} has no episode group`);
      return JSON.stringify([j[0]!.group, j[0]!.t]);
    }).values()) {
      const mean = node.reduce((s, j) => s + returnOf.get(j)!, 0) / node.length;
      for (const j of node) {
        const g = returnOf.get(j)!;
        for (const a of j) {
          a.advantages_K = perUnit(a, plan.level, g - mean);
          a.returns_K = perUnit(a, plan.level, g);
        }
      }
    }
  },
};
