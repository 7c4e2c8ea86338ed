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
// With independent episodes (rollout.jointTree: independent) the node's samples at turns after the
// first descend from different histories; a tree of joint samples (actions carrying `joint`,
// rollout.jointTree best or all) is credited node by node (treeAssign below): see docs/algorithms.md.
//
// advantage.jointActions: cross (single-turn tasks with Task.jointRewards): the node's joint samples
// are every combination c of one sample per agent (G^n of them), each scored R(c) = α·team +
// w·Σ local from the raw rewards the task reports for it (src/train/rewards.ts);
// agent k's sample i gets
//
//   A(k, i) = mean over the combinations c with c_k = i of (R(c) − mean over all c of R(c))
//
// (its own return R(c) less the node's mean, averaged over the G^(n−1) joint samples it takes part
// in: a marginal, since the advantage of a joint sample is no longer one sample's alone), and
// returns_K = the mean R(c) over those joint samples.
import type { Task } from '../task.ts';
import type { Episode } from '../../workflow/trajectory.ts';
import { groupBy } from '../../core/batching.ts';
import { turnReward, type RewardSettings } from '../rewards.ts';
import type { TrainAction } from '../types.ts';
import { perUnit, type AdvantageEstimator } from './estimator.ts';

export const returnToGoMinusGroupMean: AdvantageEstimator = {
  summary: 'MAGRPO: per-turn Monte-Carlo return-to-go minus the mean over the node’s joint samples, shared by the agents',
  needsCritic: false,
  needsGroups: true,
  levels: ['action', 'token'],
  assign(actions, { plan, config, episodes, task }) {
    if (config.advantage.jointActions === 'cross') return crossAssign(actions, plan.level, episodes, config.reward, task);
    if (actions.some((a) => a.joint !== null)) return treeAssign(actions, plan.level, config.advantage.gamma);
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

/**
 * MAGRPO's tree of joint samples (src/workflow/joint-tree-sampling.ts): a node's G joint samples
 * share its state; joint sample j's return is its turn's joint reward plus γ times the mean return
 * of the joint samples of its child node (the node that grew from it, or with continuation best
 * from the best sibling: the same child for every sibling, so the term is common to the node and
 * its advantage is the turn's reward less the node's mean), 0 without a child:
 *
 *   R(node, j) = r(node, j) + γ · mean_k R(child(node, j), k),   A(node, j) = R(node, j) − mean_k R(node, k)
 *
 * as the authors' code computes it. A node is keyed by its tree (the episode) and its path.
 */
function treeAssign(actions: TrainAction[], level: Parameters<typeof perUnit>[1], gamma: number): void {
  const nodeKey = (episode: number, node: string) => `${episode}/${node}`;
  const samples = new Map<string, Map<number, TrainAction[]>>();
  for (const a of actions) {
    if (a.joint === null) throw new Error(`episode ${a.episode}: an action outside the tree of joint samples`);
    const key = nodeKey(a.episode, a.joint.node);
    const node = samples.get(key) ?? samples.set(key, new Map()).get(key)!;
    const sample = node.get(a.joint.sample) ?? node.set(a.joint.sample, []).get(a.joint.sample)!;
    sample.push(a);
  }
  const returns = new Map<string, Map<number, number>>();
  const meanReturn = (key: string): number => {
    const rs = [...nodeReturns(key).values()];
    return rs.reduce((s, r) => s + r, 0) / rs.length;
  };
  function nodeReturns(key: string): Map<number, number> {
    const known = returns.get(key);
    if (known) return known;
    const node = samples.get(key);
    if (!node) throw new Error(`the tree of joint samples has no node ${key}`);
    const out = new Map<number, number>();
    for (const [j, sample] of node) {
      const child = sample[0]!.joint!.child;
      // A child whose actions were all dropped (no tokens) still ended its turn: it counts as 0.
      const future = child !== null && samples.has(nodeKey(sample[0]!.episode, child)) ? meanReturn(nodeKey(sample[0]!.episode, child)) : 0;
      out.set(j, sample.reduce((s, a) => s + a.reward, 0) + gamma * future);
    }
    returns.set(key, out);
    return out;
  }
  for (const [key, node] of samples) {
    const rs = nodeReturns(key);
    const mean = meanReturn(key);
    for (const [j, sample] of node) {
      for (const a of sample) {
        a.advantages_K = perUnit(a, level, rs.get(j)! - mean);
        a.returns_K = perUnit(a, level, rs.get(j)!);
      }
    }
  }
}

/** jointActions: cross (see the file comment): every combination of the agents' samples of a node. */
function crossAssign(actions: TrainAction[], level: Parameters<typeof perUnit>[1], episodes: readonly Episode[], rewards: RewardSettings, task: Pick<Task, 'jointRewards'> | undefined): void {
  const score = task?.jointRewards;
  if (!score) throw new Error('advantage.jointActions: cross needs the task\'s jointRewards');
  for (const node of groupBy(actions, (a) => {
    if (a.group === null) throw new Error(`episode ${a.episode} has no episode group`);
    if (a.t !== 0) throw new Error(`advantage.jointActions: cross scores single-turn episodes only; episode ${a.episode} has an action at turn ${a.t}`);
    return a.group;
  }).values()) {
    // samples[k]: agent k's actions (one per episode of the group), agents in execution order.
    const agents = [...groupBy(node, (a) => a.agent).values()].sort((x, y) => x[0]!.agentIndex - y[0]!.agentIndex);
    const samples = agents.map((xs) => [...xs].sort((x, y) => x.episode - y.episode));
    const episode = episodes[node[0]!.episode]!;
    const sums = samples.map((xs) => new Float64Array(xs.length));
    const counts = samples.map((xs) => new Float64Array(xs.length));
    const pick = samples.map(() => 0);
    let total = 0;
    let combos = 0;
    for (;;) {
      const raw = score.call(task, episode, samples.map((xs, k) => {
        const a = xs[pick[k]!]!;
        return { agent: a.agent, tokens: a.tokens.slice(a.scoreFrom), text: a.text };
      }));
      const r = turnReward(rewards, raw.teamReward, raw.localRewards.map((localReward) => ({ localReward })));
      total += r;
      combos++;
      pick.forEach((i, k) => { sums[k]![i] += r; counts[k]![i]++; });
      let k = samples.length - 1;
      while (k >= 0 && pick[k]! + 1 === samples[k]!.length) pick[k--] = 0;
      if (k < 0) break;
      pick[k]!++;
    }
    const mean = total / combos;
    samples.forEach((xs, k) => xs.forEach((a, i) => {
      const g = sums[k]![i]! / counts[k]![i]!;
      a.advantages_K = perUnit(a, level, g - mean);
      a.returns_K = perUnit(a, level, g);
    }));
  }
}
