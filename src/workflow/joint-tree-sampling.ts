// MAGRPO's tree of joint samples (Liu et al., "LLM Collaboration with Multi-Agent Reinforcement
// Learning"; the authors' multi-turn trainer): at every node G copies of the node's episode state
// (EpisodeState.copy) each play one whole turn, every agent acting (one joint action per copy; the
// copies are rows of the same sampling calls, so they draw different actions). The G joint samples
// of a node are MAGRPO's group. Which of them the next turn grows from:
//   all   every joint sample whose episode goes on is the root of its own child node (the authors'
//         code: "branching uses all generations"; G + G² + ... + G^T joint samples per problem);
//   best  only the best joint sample (by its turn's joint reward, the first on ties) continues, and
//         its child node is the continuation of every sibling (T·G joint samples per problem).
// A joint sample's turn reward is what MAGRPO's estimator sums for it: the turn's team credit once
// plus every agent's role-local reward. Each action of the tree is kept (Episode.candidates, with
// `joint`: node, sample, child node, team credit); Episode.actions is the path of the best joint
// sample of every node from the root, whose steps and score the metrics report.
import { deriveSeed } from '../core/rng.ts';
import type { TaskEnv } from './env-api.ts';
import { EpisodeState } from './episode-state.ts';
import { WorkflowError } from './errors.ts';
import { advanceEpisodes, finishedEpisode, type RolloutOptions } from './rollout.ts';
import { bestCandidate } from './tree-sampling.ts';
import type { ActionRecord, Episode } from './trajectory.ts';
import type { Workflow } from './workflow.ts';

export type JointContinuation = 'all' | 'best';

export interface JointTreeOptions extends RolloutOptions {
  /** G: joint samples per node (at least 1). */
  branches: number;
  continuation: JointContinuation;
}

interface Node {
  tree: number;
  id: string;
  state: EpisodeState;
  /** On the path of best joint samples from the root. */
  onPath: boolean;
}

/** The id of sample j's child node of node `id` ('' is the root). */
const childId = (id: string, j: number): string => (id === '' ? `${j}` : `${id}.${j}`);

/** The joint reward of one turn's actions: the team credit once plus the role-local rewards. */
function jointReward(actions: readonly ActionRecord[], teamCredit: number): number {
  return teamCredit + actions.reduce((s, a) => s + (a.localReward ?? 0), 0);
}

/** One tree per environment (episode e from envs[e]). */
export async function jointTreeRollout(workflow: Workflow, envs: readonly TaskEnv[], options: JointTreeOptions): Promise<Episode[]> {
  const G = options.branches;
  if (!Number.isInteger(G) || G < 1) throw new WorkflowError(`joint tree sampling: branches must be a positive integer, got ${G}`);
  const candidates: ActionRecord[][] = envs.map(() => []);
  const path: (EpisodeState | undefined)[] = envs.map(() => undefined);
  let frontier: Node[] = envs.map((env, e) => ({ tree: e, id: '', state: new EpisodeState(env, e), onPath: true }));
  let call = 0;
  while (frontier.length > 0) {
    const copies = frontier.flatMap((n) => Array.from({ length: G }, () => n.state.copy()));
    const turn = new Map(copies.map((c, i) => [c, frontier[Math.floor(i / G)]!.state.t]));
    // Every copy plays its node's turn to the end: one joint action each.
    await advanceEpisodes(workflow, copies, { ...options, params: { ...options.params, seed: deriveSeed(options.params.seed, call++) } }, (c) => c.done || c.t !== turn.get(c));
    const next: Node[] = [];
    frontier.forEach((n, i) => {
      const mine = copies.slice(i * G, (i + 1) * G);
      const from = n.state.actions.length;
      const steps = mine.map((c) => c.steps[c.steps.length - 1]!);
      const credits = steps.map((s) => s.teamCredit ?? s.teamReward);
      const rewards = mine.map((c, j) => jointReward(c.actions.slice(from), credits[j]!));
      const best = bestCandidate(rewards);
      const continues = (j: number) => !mine[j]!.done && (options.continuation === 'all' || j === best);
      const childOf = (j: number): string | null => {
        const k = options.continuation === 'all' ? j : best;
        return continues(k) ? childId(n.id, k) : null;
      };
      mine.forEach((c, j) => {
        for (const a of c.actions.slice(from)) {
          candidates[n.tree]!.push({ ...structuredClone(a), branch: { k: j, executed: n.onPath && j === best }, joint: { node: n.id, sample: j, child: childOf(j), teamCredit: credits[j]! } });
        }
        if (continues(j)) next.push({ tree: n.tree, id: childId(n.id, j), state: c, onPath: n.onPath && j === best });
      });
      if (n.onPath && mine[best]!.done) path[n.tree] = mine[best];
    });
    frontier = next;
  }
  return path.map((s, e) => ({ ...finishedEpisode(workflow, s!, options), candidates: candidates[e]! }));
}
