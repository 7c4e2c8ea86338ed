// coordination-game: a referential game (two agents, one environment step) on raw token ids, for
// sanity and learning tests of the trainer.
//   tokens: 0 = BOS, 1 = sender tag, 2 = receiver tag, 3 .. 3+K−1 = the K symbols.
//   The sender sees a secret symbol s: prompt [BOS, 1, 3+s]; it emits `messageTokens` tokens.
//   The receiver sees the sender's message when `dependency` is true (D = 1): prompt
//   [BOS, 2, message...]; with D = 0 it sees only [BOS, 2]. It answers with one token.
//   Team reward 1 if the answer is 3+s, else 0. Only a receiver that conditions on the sender's
//   action can beat chance (1/K at best without it: the secret is uniform). `senderHint` h > 0
//   adds a role-local reward h to the sender when its first message token is the secret itself
//   (a planner rewarded for stating the plan), which removes the symmetry-breaking phase of the
//   pure referential game; the score stays the team outcome.
//
// The secrets of training step `step` come from the request's seed only; evaluation episodes use
// seeds from a separate stream (the training distribution: a secret game has nothing to hold out).
// With dependency: false the task scores any sender–receiver combination (Task.jointRewards, for
// MAGRPO's advantage.jointActions: cross).
// With `model.engine: embedded` and no model.path, the task builds the toy decoder (./toy-decoder.ts).
import type { SamplingEngine } from '../../engine/types.ts';
import { deriveSeed } from '../../core/rng.ts';
import type { JointAction, JointRewards, Sampling, Task, TaskBundle } from '../../train/task.ts';
import { policyTarget } from '../../workflow/sampler.ts';
import type { Episode } from '../../workflow/trajectory.ts';
import { boolOption, intOption, numberOption, refuseMovedRewardOptions, rejectUnknown, type Options } from '../options.ts';
import { sampleParams, secretGame, tokenAction } from './token-play.ts';
import { hiddenSizeOption, toyDecoder } from './toy-decoder.ts';

export interface CoordinationGameOptions {
  symbols: number;
  dependency: boolean;
  messageTokens: number;
  senderHint: number;
}

export function coordinationGame(options: Options = {}): TaskBundle {
  const o: CoordinationGameOptions = {
    symbols: intOption(options, 'symbols', 4, 1),
    dependency: boolOption(options, 'dependency', true),
    messageTokens: intOption(options, 'messageTokens', 1, 1),
    senderHint: numberOption(options, 'senderHint', 0, 0),
  };
  const hiddenSize = hiddenSizeOption(options);
  // How the team reward is shared between the two actions is the run's reward.share now.
  refuseMovedRewardOptions(options, { teamReward: 'reward.share (broadcast or split)' });
  rejectUnknown(options, ['symbols', 'dependency', 'messageTokens', 'senderHint', 'hiddenSize'], 'coordination-game');
  const K = o.symbols;
  const play = async (engine: SamplingEngine, secrets: number[], seed: number, sampling: Sampling, policies: Record<string, string>): Promise<Episode[]> => {
    const senderPrompts = secrets.map((s) => [0, 1, 3 + s]);
    const sent = await engine.sample(policyTarget(policies.sender!), senderPrompts, sampleParams(sampling, o.messageTokens, deriveSeed(seed, 1)));
    const receiverPrompts = sent.map((m) => (o.dependency ? [0, 2, ...m.tokens] : [0, 2]));
    const answered = await engine.sample(policyTarget(policies.receiver!), receiverPrompts, sampleParams(sampling, 1, deriveSeed(seed, 2)));
    return secrets.map((s, b) => {
      const team = answered[b]!.tokens[0] === 3 + s ? 1 : 0;
      const hint = sent[b]!.tokens[0] === 3 + s ? o.senderHint : 0;
      return {
        problemId: `secret-${s}`,
        actions: [
          // The critic's joint state: the secret (the sender's view), then the message and whose turn it is.
          { ...tokenAction('sender', 0, policies.sender!, senderPrompts[b]!, sent[b]!, hint), criticTokens: senderPrompts[b]! },
          { ...tokenAction('receiver', 1, policies.receiver!, receiverPrompts[b]!, answered[b]!), criticTokens: [...senderPrompts[b]!, ...sent[b]!.tokens, 2] },
        ],
        steps: [{ t: 0, teamReward: team, done: true }],
        outcome: team,
        info: { secret: s, answer: answered[b]!.tokens[0]! - 3 },
      };
    });
  };
  // Without the dependency the receiver never sees the message, so any sender's message and any
  // receiver's answer drawn for one secret make a joint sample (advantage.jointActions: cross):
  // its raw rewards are the team reward of the answer and the sender's hint for the message.
  const jointRewards = (episode: Episode, actions: readonly JointAction[]): JointRewards => {
    const s = episode.info.secret as number;
    const [sender, receiver] = actions;
    return { teamReward: receiver!.tokens[0] === 3 + s ? 1 : 0, localRewards: [sender!.tokens[0] === 3 + s ? o.senderHint : 0, 0] };
  };
  const task: Task = { agents: ['sender', 'receiver'], ...secretGame(K, play), ...(o.dependency ? {} : { jointRewards }) };
  return { task, vocabSize: 3 + K, buildEngine: async (seed) => toyDecoder(3 + K, hiddenSize, seed) };
}
