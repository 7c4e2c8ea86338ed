// bandit (one agent, one step) on raw token ids: prompt [BOS, 1]; one token a; team reward
// armRewards[a − 2] (0 for tokens 0, 1). The smallest learning test of the trainer.
//
// The pulls of training step `step` use the request's seed only; evaluation pulls a separate seed
// stream. With `model.engine: embedded` and no model.path, the task builds the toy decoder
// (./toy-decoder.ts).
import type { SamplingEngine } from '../../engine/types.ts';
import { deriveSeed } from '../../core/rng.ts';
import { tagGroups } from '../../train/episode-groups.ts';
import type { Sampling, Task, TaskBundle } from '../../train/task.ts';
import { policyTarget } from '../../workflow/sampler.ts';
import type { Episode } from '../../workflow/trajectory.ts';
import { optionError, rejectUnknown, type Options } from '../options.ts';
import { sampleParams, tokenAction } from './token-play.ts';
import { hiddenSizeOption, toyDecoder } from './toy-decoder.ts';

export function bandit(options: Options = {}): TaskBundle {
  const arms = options.armRewards ?? [0, 0.2, 1, 0.5];
  if (!Array.isArray(arms) || arms.length === 0 || !arms.every((x) => typeof x === 'number')) throw optionError('armRewards', arms, 'a non-empty list of numbers');
  const hiddenSize = hiddenSizeOption(options);
  rejectUnknown(options, ['armRewards', 'hiddenSize'], 'bandit');
  const rewards = arms as number[];
  const pull = async (engine: SamplingEngine, n: number, seed: number, sampling: Sampling, policies: Record<string, string>): Promise<Episode[]> => {
    const prompts = Array.from({ length: n }, () => [0, 1]);
    const out = await engine.sample(policyTarget(policies.agent!), prompts, sampleParams(sampling, 1, seed));
    return out.map((r, b) => {
      const reward = rewards[r.tokens[0]! - 2] ?? 0;
      return { problemId: 'bandit', actions: [tokenAction('agent', 0, policies.agent!, prompts[b]!, r)], steps: [{ t: 0, teamReward: reward, done: true }], outcome: reward, info: { arm: r.tokens[0]! - 2 } };
    });
  };
  const task: Task = {
    agents: ['agent'],
    async rollout(engine, req) {
      // One problem (the same prompt) drawn batchSize times; the rolloutsPerPrompt pulls of each draw form its group.
      const problemIndex = Array.from({ length: req.batchSize * req.rolloutsPerPrompt }, (_, k) => Math.floor(k / req.rolloutsPerPrompt));
      return tagGroups(await pull(engine, problemIndex.length, req.seed, req.sampling, req.policies), problemIndex);
    },
    evaluate: (engine, req) => pull(engine, req.problems > 0 ? req.problems : 64, deriveSeed(req.seed, 7919), req.sampling, req.policies),
  };
  return { task, vocabSize: 2 + rewards.length, buildEngine: async (seed) => toyDecoder(2 + rewards.length, hiddenSize, seed) };
}
