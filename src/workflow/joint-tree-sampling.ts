// Trees of joint samples (MAGRPO: Liu et al., "LLM Collaboration with Multi-Agent Reinforcement
// Learning", the authors' multi-turn trainer; AT-GRPO's tree sampling, ./tree-sampling.ts, is the
// best-continues form): at every node G copies of the node's episode state (EpisodeState.copy) each
// play one whole turn, every agent acting (one joint action per copy; the copies are rows of the
// same sampling calls, so they draw different actions). The G joint samples of a node are a group.
// Which of them the next turn grows from:
//   all   every joint sample whose episode goes on is the root of its own child node (the authors'
//         code: "branching uses all generations"; G + G² + ... + G^T joint samples per problem);
//   best  only the best joint sample (by the caller's score of its turn, the first on ties)
//         continues, and its child node is the continuation of every sibling (T·G joint samples per
//         problem).
// The runtime places no reward: a copy's turn is ranked by the caller's TurnScore (the trainer's
// reward settings, src/train/rewards.ts), which reads the turn's raw records. Each action of the
// tree is kept (Episode.candidates, with `branch` and `joint`: node, sample, child node, the turn's
// raw team reward); Episode.actions is the path of the best joint sample of every node from the
// root, whose steps and outcome the metrics report.
import { deriveSeed } from '../core/rng.ts';
import type { TaskEnv } from './env-api.ts';
import { EpisodeState } from './episode-state.ts';
import { WorkflowError } from './errors.ts';
import { advanceEpisodes, finishedEpisode, type RolloutOptions } from './rollout.ts';
import type { ActionRecord, Episode } from './trajectory.ts';
import type { Workflow } from './workflow.ts';

export type JointContinuation = 'all' | 'best';

/**
 * How a branching sampler ranks the copies of one turn: from the turn's raw records (the team reward
 * its copy's environment reported, its actions with their raw role-local rewards) to a number, the
 * higher the better. The trainer builds it from the run's reward settings (src/train/rewards.ts).
 */
export type TurnScore = (turn: { teamReward: number; actions: readonly ActionRecord[] }) => number;

export interface JointTreeOptions extends RolloutOptions {
  /** G: joint samples per node (at least 1). */
  branches: number;
  continuation: JointContinuation;
  /** Ranks a node's joint samples (which one continues under `best`, which one is on the executed path). */
  score: TurnScore;
}

/** Index of the best score, the first one on ties. */
export function bestCandidate(scores: readonly number[]): number {
  if (scores.length === 0) throw new Error('bestCandidate: no candidates');
  let best = 0;
  for (let k = 1; k < scores.length; k++) if (scores[k]! > scores[best]!) best = k;
  return best;
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
      const teamRewards = mine.map((c) => c.steps[c.steps.length - 1]!.teamReward);
      const best = bestCandidate(mine.map((c, j) => options.score({ teamReward: teamRewards[j]!, actions: c.actions.slice(from) })));
      const continues = (j: number) => !mine[j]!.done && (options.continuation === 'all' || j === best);
      const childOf = (j: number): string | null => {
        const k = options.continuation === 'all' ? j : best;
        return continues(k) ? childId(n.id, k) : null;
      };
      mine.forEach((c, j) => {
        for (const a of c.actions.slice(from)) {
          candidates[n.tree]!.push({ ...structuredClone(a), branch: { k: j, executed: n.onPath && j === best }, joint: { node: n.id, sample: j, child: childOf(j), teamReward: teamRewards[j]! } });
        }
        if (continues(j)) next.push({ tree: n.tree, id: childId(n.id, j), state: c, onPath: n.onPath && j === best });
      });
      if (n.onPath && mine[best]!.done) path[n.tree] = mine[best];
    });
    frontier = next;
  }
  return path.map((s, e) => ({ ...finishedEpisode(workflow, s!, options), candidates: candidates[e]! }));
}
