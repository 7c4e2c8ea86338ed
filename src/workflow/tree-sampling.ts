// Tree sampling (AT-GRPO, Zhao et al., "Stronger Together: On-Policy RL for Collaborative LLMs", as
// the authors' code does it): at every turn K identical copies of the episode state (EpisodeState.copy)
// each play the whole turn, every agent answering once per copy (the K copies are rows of one
// sampling call per round, so they draw different actions); the copies' environments step; the copy
// with the best score (the caller's TurnScore of its turn, the first on ties) is the one the
// episode continues from, as if it were copied over all K; every action of every copy is kept for
// training (Episode.candidates), so the K candidates of one (problem, turn, agent) form a group
// whose members share the turn's starting state.
//
// A whole copy is chosen, never the best candidate of each agent from different copies: an agent's
// candidate is scored together with the actions the other agents took in its own copy, and the
// executed turn is one that was actually played. This is the best-continues tree of joint samples
// (./joint-tree-sampling.ts, continuation best), which this is.
import type { TaskEnv } from './env-api.ts';
import { jointTreeRollout, type TurnScore } from './joint-tree-sampling.ts';
import type { RolloutOptions } from './rollout.ts';
import type { Episode } from './trajectory.ts';
import type { Workflow } from './workflow.ts';

export interface TreeRolloutOptions extends RolloutOptions {
  /** K: copies per turn (at least 1). */
  branches: number;
  /** Ranks the K copies of a turn (the trainer's: α·team + localWeight·Σ local, src/train/rewards.ts). */
  score: TurnScore;
}

/**
 * One tree per environment (episode e from envs[e]); each Episode's `actions` is the executed path
 * (the best copy of every turn) and `candidates` every copy's actions (K per agent per turn, with
 * `branch` and `joint`: node, copy, the copy's raw team reward).
 */
export function treeRollout(workflow: Workflow, envs: readonly TaskEnv[], options: TreeRolloutOptions): Promise<Episode[]> {
  return jointTreeRollout(workflow, envs, { ...options, continuation: 'best' });
}
