// Two tiny Flex-MG tasks on raw token ids, for sanity and learning tests of the trainer.
//
// coordination-game (a referential game, two agents, one environment step):
//   tokens: 0 = BOS, 1 = sender tag, 2 = receiver tag, 3 .. 3+K−1 = the K symbols.
//   The sender sees a secret symbol s: prompt [BOS, 1, 3+s]; it emits `messageTokens` tokens.
//   The receiver sees the sender's message when `dependency` is true (D = 1): prompt
//   [BOS, 2, message...]; with D = 0 it sees only [BOS, 2]. It answers with one token.
//   Team reward 1 if the answer is 3+s, else 0. Only a receiver that conditions on the sender's
//   action can beat chance (1/K at best without it: the secret is uniform). `senderHint` h > 0
//   adds a role-local reward h to the sender when its first message token is the secret itself
//   (a planner rewarded for stating the plan), which removes the symmetry-breaking phase of the
//   pure referential game; the score stays the team outcome.
// bandit (one agent, one step): prompt [BOS, 1]; one token a; reward armRewards[a − 2] (0 for tokens 0, 1).
//
// Both draw the problems of training step `step` from the request's seed only; evaluation episodes
// use seeds from a separate stream (the training distribution: a secret game has nothing to hold
// out). With `model.engine: embedded` and no model.path, both build a
// tiny random Qwen3-shaped decoder (hidden `hiddenSize`, default 256, 2 layers): wide enough that
// LoRA alone can make its next-token distribution peaked.
import { createEngine } from '../engine/index.ts';
import type { Engine, ModelConfig } from '../engine/types.ts';
import { policyTarget } from '../workflow/sampler.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { tagGroups } from './episode-groups.ts';
import { deriveSeed, mulberry32 } from '../rng.ts';
import { boolOption, intOption, numberOption, oneOfOption, optionError, rejectUnknown, type Options } from '../tasks/options.ts';
import type { EvalRequest, RolloutRequest, Sampling, Task, TaskBundle } from './task.ts';
import { registerTask } from './task.ts';

type TeamRewardMode = 'broadcast' | 'split';

function sampleParams(s: Sampling, maxNewTokens: number, seed: number) {
  return { temperature: s.temperature, topP: s.topP, topK: s.topK, maxNewTokens, stopTokenIds: [], stopStrings: [], seed };
}

function action(agent: string, agentIndex: number, policy: string, promptTokens: number[], r: { tokens: number[]; logprobs: number[]; stopReason: ActionRecord['stopReason'] }, reward: number): ActionRecord {
  return { agent, agentIndex, step: 0, policy, promptTokens, actionTokens: r.tokens, behaviourLogprobs: r.logprobs, stopReason: r.stopReason, text: r.tokens.join(' '), reward };
}

export interface CoordinationGameOptions {
  symbols: number;
  dependency: boolean;
  messageTokens: number;
  teamReward: TeamRewardMode;
  senderHint: number;
}

export function coordinationGame(options: Options = {}): TaskBundle {
  const o: CoordinationGameOptions = {
    symbols: intOption(options, 'symbols', 4, 1),
    dependency: boolOption(options, 'dependency', true),
    messageTokens: intOption(options, 'messageTokens', 1, 1),
    teamReward: oneOfOption(options, 'teamReward', ['broadcast', 'split'] as const, 'broadcast'),
    senderHint: numberOption(options, 'senderHint', 0, 0),
  };
  const hiddenSize = hiddenSizeOption(options);
  rejectUnknown(options, ['symbols', 'dependency', 'messageTokens', 'teamReward', 'senderHint', 'hiddenSize'], 'coordination-game');
  const K = o.symbols;
  const play = async (engine: Engine, secrets: number[], seed: number, sampling: Sampling, policies: Record<string, string>): Promise<Episode[]> => {
    const senderPrompts = secrets.map((s) => [0, 1, 3 + s]);
    const sent = await engine.sample(policyTarget(policies.sender!), senderPrompts, sampleParams(sampling, o.messageTokens, deriveSeed(seed, 1)));
    const receiverPrompts = sent.map((m) => (o.dependency ? [0, 2, ...m.tokens] : [0, 2]));
    const answered = await engine.sample(policyTarget(policies.receiver!), receiverPrompts, sampleParams(sampling, 1, deriveSeed(seed, 2)));
    return secrets.map((s, b) => {
      const team = answered[b]!.tokens[0] === 3 + s ? 1 : 0;
      const share = o.teamReward === 'split' ? team / 2 : team;
      const hint = sent[b]!.tokens[0] === 3 + s ? o.senderHint : 0;
      return {
        problemId: `secret-${s}`,
        actions: [
          // The critic's joint state: the secret (the sender's view), then the message and whose turn it is.
          { ...action('sender', 0, policies.sender!, senderPrompts[b]!, sent[b]!, share + hint), localReward: hint, criticTokens: senderPrompts[b]! },
          { ...action('receiver', 1, policies.receiver!, receiverPrompts[b]!, answered[b]!, share), localReward: 0, criticTokens: [...senderPrompts[b]!, ...sent[b]!.tokens, 2] },
        ],
        steps: [{ t: 0, teamReward: team, teamCredit: team, done: true }],
        score: team,
        info: { secret: s, answer: answered[b]!.tokens[0]! - 3 },
      };
    });
  };
  const task: Task = {
    agents: ['sender', 'receiver'],
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
    async evaluate(engine: Engine, req: EvalRequest) {
      // Evaluation episodes, not held-out ones: every secret, 16 times each (all the task has; `problems` caps it).
      const all = Array.from({ length: 16 * K }, (_, i) => i % K);
      return play(engine, req.problems > 0 ? all.slice(0, req.problems) : all, deriveSeed(req.seed, 7919), req.sampling, req.policies);
    },
  };
  return { task, vocabSize: 3 + K, buildEngine: async (seed) => tinyDecoder(3 + K, hiddenSize, seed) };
}

export function bandit(options: Options = {}): TaskBundle {
  const arms = options.armRewards ?? [0, 0.2, 1, 0.5];
  if (!Array.isArray(arms) || arms.length === 0 || !arms.every((x) => typeof x === 'number')) throw optionError('armRewards', arms, 'a non-empty list of numbers');
  const hiddenSize = hiddenSizeOption(options);
  rejectUnknown(options, ['armRewards', 'hiddenSize'], 'bandit');
  const rewards = arms as number[];
  const pull = async (engine: Engine, n: number, seed: number, sampling: Sampling, policies: Record<string, string>): Promise<Episode[]> => {
    const prompts = Array.from({ length: n }, () => [0, 1]);
    const out = await engine.sample(policyTarget(policies.agent!), prompts, sampleParams(sampling, 1, seed));
    return out.map((r, b) => {
      const reward = rewards[r.tokens[0]! - 2] ?? 0;
      return { problemId: 'bandit', actions: [action('agent', 0, policies.agent!, prompts[b]!, r, reward)], steps: [{ t: 0, teamReward: reward, done: true }], score: reward, info: { arm: r.tokens[0]! - 2 } };
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
  return { task, vocabSize: 2 + rewards.length, buildEngine: async (seed) => tinyDecoder(2 + rewards.length, hiddenSize, seed) };
}

/** A tiny random Qwen3-shaped decoder over the task's token ids. */
export function tinyDecoder(vocabSize: number, hiddenSize: number, seed: number): Engine {
  const config: ModelConfig = {
    architecture: 'qwen3', vocabSize, hiddenSize, intermediateSize: 2 * hiddenSize, numHiddenLayers: 2, numAttentionHeads: 4, numKeyValueHeads: 2,
    headDim: hiddenSize / 4, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 64, tieWordEmbeddings: true, attentionBias: false, qkNorm: true,
    bosTokenId: 0, eosTokenIds: [],
  };
  return createEngine(config, { seed });
}

function hiddenSizeOption(options: Options): number {
  const hiddenSize = intOption(options, 'hiddenSize', 256, 4);
  if (hiddenSize % 4 !== 0) throw optionError('hiddenSize', hiddenSize, 'a positive multiple of 4');
  return hiddenSize;
}

registerTask('coordination-game', coordinationGame);
registerTask('bandit', bandit);
import '../tasks/toy/relay-game.ts';
