// Tree sampling (AT-GRPO, Zhao et al., "Stronger Together: On-Policy RL for Collaborative LLMs"):
// at every turn, each agent draws K candidate actions from K identical copies of the episode state;
// every candidate is scored, the best-reward one is executed, and all K are kept for training, so
// the K candidates of one (problem, turn, agent) form a group whose members differ only in that
// agent's action (a true GRPO group, unlike sibling episodes whose histories diverge).
//
// One round at a time (a round: the agents of one topological level, or the orchestrator):
//   1. K copies of each live episode state (EpisodeState.copy) each play the round once (the K
//      copies are rows of one sampling call, so they draw different actions);
//   2. a copy whose round did not end the step plays the rest of its step (the later agents sample
//      in the copy only), so each candidate gets the step's reward: the runtime's reward assignment,
//      α·team + local (AT-GRPO: α = 1, local weight 1: task.options.teamWeight / localWeight);
//   3. per agent of the round the best candidate (first on ties) is executed: the real state plays
//      the round again with a sampler that replays the chosen candidates' tokens and log-probs.
// A candidate of an earlier level is therefore scored through one sampled continuation of its step
// (a Monte Carlo estimate); a candidate of the step's last level is scored exactly. Agents of one
// level never see each other, so the chosen candidates of a level combine into a consistent round.
import type { SampleResult } from '../engine/types.ts';
import { deriveSeed } from '../core/rng.ts';
import type { TaskEnv } from './env-api.ts';
import { EpisodeState } from './episode-state.ts';
import { WorkflowError } from './errors.ts';
import { advanceEpisodes, finishedEpisode, type RolloutOptions } from './rollout.ts';
import type { ActionSampler } from './sampler.ts';
import type { ActionRecord, Episode } from './trajectory.ts';
import type { Workflow } from './workflow.ts';

export interface TreeRolloutOptions extends RolloutOptions {
  /** K: candidate actions per agent per turn (at least 1). */
  branches: number;
}

/** Index of the best reward, the first one on ties. */
export function bestCandidate(rewards: readonly number[]): number {
  if (rewards.length === 0) throw new Error('bestCandidate: no candidates');
  let best = 0;
  for (let k = 1; k < rewards.length; k++) if (rewards[k]! > rewards[best]!) best = k;
  return best;
}

/** Plays back given actions: the request of episode e's agent a gets chosen.get(`${e}/${a}`). */
function replaySampler(chosen: Map<string, ActionRecord>): ActionSampler {
  return {
    async sample(requests) {
      return requests.map((r): SampleResult => {
        const key = `${r.meta?.episode}/${r.meta?.agent}`;
        const a = chosen.get(key);
        if (!a) throw new WorkflowError(`tree sampling: no chosen candidate for ${key}`);
        if (a.promptTokens.length !== r.prompt.length || a.promptTokens.some((x, i) => x !== r.prompt[i])) {
          throw new WorkflowError(`tree sampling: the executed state of ${key} does not see what its copies saw (the workflow's observation is not a function of the episode state)`);
        }
        return { tokens: [...a.actionTokens], logprobs: [...a.behaviourLogprobs], stopReason: a.stopReason };
      });
    },
  };
}

/**
 * One tree per environment (episode e from envs[e]); each Episode's `actions` is the executed path
 * and `candidates` every candidate (K per agent per turn, with its reward and `branch`).
 */
export async function treeRollout(workflow: Workflow, envs: readonly TaskEnv[], options: TreeRolloutOptions): Promise<Episode[]> {
  const K = options.branches;
  if (!Number.isInteger(K) || K < 1) throw new WorkflowError(`tree sampling: branches must be a positive integer, got ${K}`);
  const trees = envs.map((env, e) => new EpisodeState(env, e));
  const candidates: ActionRecord[][] = trees.map(() => []);
  let call = 0;
  const withSeed = (sampler: ActionSampler = options.sampler): RolloutOptions => ({ ...options, sampler, params: { ...options.params, seed: deriveSeed(options.params.seed, call++) } });

  for (;;) {
    const live = trees.filter((s) => !s.done);
    if (live.length === 0) break;
    const copies = live.flatMap((s) => Array.from({ length: K }, () => s.copy()));
    const treeOf = (j: number): EpisodeState => live[Math.floor(j / K)]!;
    const from = new Map(live.map((s) => [s, s.actions.length]));
    const turn = new Map(copies.map((c, j) => [c, treeOf(j).t]));
    // 1. Every copy plays one round.
    await advanceEpisodes(workflow, copies, withSeed(), () => true);
    // Every copy of a tree played the same round (the same agents), whatever happens after it.
    const roundSize = live.map((s, i) => copies[i * K]!.actions.length - from.get(s)!);
    // 2. Copies whose step is still open play it to its end, so every candidate has its step's reward.
    const open = copies.filter((c) => !c.done && c.t === turn.get(c));
    if (open.length > 0) await advanceEpisodes(workflow, open, withSeed(), (c) => c.done || c.t !== turn.get(c));
    // 3. The best candidate of each agent of the round is executed.
    const chosen = new Map<string, ActionRecord>();
    live.forEach((s, i) => {
      const start = from.get(s)!;
      const mine = copies.slice(i * K, (i + 1) * K);
      for (let j = 0; j < roundSize[i]!; j++) {
        const records = mine.map((c) => c.actions[start + j]!);
        const k = bestCandidate(records.map((a) => a.reward));
        records.forEach((a, m) => candidates[s.episode]!.push({ ...structuredClone(a), branch: { k: m, executed: m === k } }));
        chosen.set(`${s.episode}/${records[k]!.agent}`, records[k]!);
      }
    });
    await advanceEpisodes(workflow, live, withSeed(replaySampler(chosen)), () => true);
  }
  return trees.map((s, e) => ({ ...finishedEpisode(workflow, s, options), candidates: candidates[e]! }));
}
