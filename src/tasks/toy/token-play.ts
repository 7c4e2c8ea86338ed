// What the toy tasks on raw token ids share: the sampling parameters of one turn, the
// ActionRecord of a sampled reply (its text is the token ids, there being no tokenizer), and the
// rollout and evaluation of a secret game (coordination-game, relay-game).
import type { Engine, SamplingEngine } from '../../engine/types.ts';
import { deriveSeed, mulberry32 } from '../../core/rng.ts';
import { tagGroups } from '../../train/episode-groups.ts';
import type { EvalRequest, RolloutRequest, Sampling, Task } from '../../train/task.ts';
import type { ActionRecord, Episode } from '../../workflow/trajectory.ts';

export function sampleParams(s: Sampling, maxNewTokens: number, seed: number) {
  return { temperature: s.temperature, topP: s.topP, topK: s.topK, maxNewTokens, stopTokenIds: [], stopStrings: [], seed };
}

/** A sampled reply at turn 0 as an ActionRecord; `localReward` is its raw role-local reward (0: none). */
export function tokenAction(agent: string, agentIndex: number, policy: string, promptTokens: number[], r: { tokens: number[]; logprobs: number[]; stopReason: ActionRecord['stopReason'] }, localReward = 0): ActionRecord {
  return { agent, agentIndex, step: 0, policy, promptTokens, actionTokens: r.tokens, behaviourLogprobs: r.logprobs, stopReason: r.stopReason, text: r.tokens.join(' '), localReward };
}

/** Plays one episode per secret (a symbol 0..K−1), the b-th episode's secret secrets[b]. */
export type PlaySecrets = (engine: SamplingEngine, secrets: number[], seed: number, sampling: Sampling, policies: Record<string, string>) => Promise<Episode[]>;

/**
 * A secret game's rollout and evaluation over K symbols. Training draws batchSize secrets uniformly
 * from the request's seed only, each played rolloutsPerPrompt times. Evaluation episodes, not
 * held-out ones: every secret 16 times (`problems` caps it) under a separate seed stream, the
 * training distribution (a secret game has nothing to hold out).
 */
export function secretGame(K: number, play: PlaySecrets): Pick<Task, 'rollout' | 'evaluate'> {
  return {
    async rollout(engine: Engine, req: RolloutRequest) {
      const rng = mulberry32(deriveSeed(req.seed, 0));
      const secrets: number[] = [];
      const problemIndex: number[] = [];
      for (let p = 0; p < req.batchSize; p++) {
        const s = Math.floor(rng() * K);
        for (let g = 0; g < req.rolloutsPerPrompt; g++) secrets.push(s), problemIndex.push(p);
      }
      // The rolloutsPerPrompt episodes of the p-th secret drawn form one group (a secret drawn twice is two groups).
      return tagGroups(await play(engine, secrets, req.seed, req.sampling, req.policies), problemIndex);
    },
    async evaluate(engine: SamplingEngine, req: EvalRequest) {
      const all = Array.from({ length: 16 * K }, (_, i) => i % K);
      return play(engine, req.problems > 0 ? all.slice(0, req.problems) : all, deriveSeed(req.seed, 7919), req.sampling, req.policies);
    },
  };
}
