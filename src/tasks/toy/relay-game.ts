// relay-game: a chain of n agents passing a secret along, the toy task on which MARFT's
// centralised critic and action-level credit (spec section 4) should separate from IPPO
// (docs/training.md, "MARFT against IPPO").
//
//   tokens: 0 = BOS, 1..n = agent tags (agent i has tag i), 1+n .. n+K = the K symbols.
//   agent1 sees the secret s:                    prompt [BOS, 1, sym(s)]
//   agent i > 1 sees only what reached it from agent i−1: prompt [BOS, i, d_{i−1}]
//   every agent emits one token; agents 1..n−1 emit a message (any token: the code is theirs to
//   invent), agent n answers. Team reward 1 iff the answer is sym(s), else 0; no local rewards.
//   noise p: each message of agents 1..n−1 is, with probability p, replaced by the environment with
//   a symbol drawn uniformly from the K before it is delivered (d_i ≠ the sent token), so the
//   outcome of an early agent's action carries the chance of every later corruption.
//
// Credit reaches agent1 only through every later agent, and no agent after the first sees the
// secret: IPPO's per-agent critic of agent i > 1 reads [BOS, i, d_{i−1}] and cannot tell whether
// the message it values is right. The centralised critic reads the joint state before agent i:
//   [BOS, 1, sym(s), d_1, ..., d_{i−1}, i]
// the secret and every message as delivered. What was sent before a corruption is left out: what
// follows depends on a message only through what was delivered, so the delivered messages and the
// secret are the part of the joint state every value depends on.
// criticView 'own' (an ablation) gives the centralised critic each agent's own prompt instead, so a
// MARFT run keeps its joint chain but loses what the critic knows beyond the acting agent.
//
// Training episodes draw secrets uniformly from the step's seed only. Evaluation episodes are every
// secret 16 times under a separate seed stream: the same distribution as training (a secret game
// has nothing to hold out), so an evaluation score measures the learned protocol, not
// generalisation.
import type { SamplingEngine } from '../../engine/types.ts';
import { deriveSeed, mulberry32 } from '../../core/rng.ts';
import { intOption, numberOption, oneOfOption, rejectUnknown, type Options } from '../options.ts';
import type { Sampling, Task, TaskBundle } from '../../train/task.ts';
import { policyTarget } from '../../workflow/sampler.ts';
import type { ActionRecord, Episode } from '../../workflow/trajectory.ts';
import { sampleParams, secretGame } from './token-play.ts';
import { hiddenSizeOption, toyDecoder } from './toy-decoder.ts';
import { relayExactValues } from './relay-exact-values.ts';

export const MIN_RELAY_AGENTS = 2;
export const MAX_RELAY_AGENTS = 6;

export interface RelayGameOptions {
  /** Number of agents in the chain, MIN_RELAY_AGENTS..MAX_RELAY_AGENTS. */
  agents: number;
  /** Size K of the secret's alphabet. */
  symbols: number;
  /** Probability that the environment replaces a message (agents 1..n−1) by a uniform symbol. */
  noise: number;
  /** What ActionRecord.criticTokens holds: the joint state (default) or the acting agent's own prompt. */
  criticView: 'joint' | 'own';
}

export const RELAY_GAME_OPTIONS = ['agents', 'symbols', 'noise', 'criticView', 'hiddenSize'] as const;

/** The token ids of a relay of `agents` agents over `symbols` symbols. */
export function relayTokens(o: Pick<RelayGameOptions, 'agents' | 'symbols'>) {
  return {
    bos: 0,
    tag: (agentIndex: number) => 1 + agentIndex,
    symbol: (k: number) => 1 + o.agents + k,
    vocabSize: 1 + o.agents + o.symbols,
  };
}

export function relayAgentNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `agent${i + 1}`);
}

export function parseRelayGameOptions(options: Options): RelayGameOptions & { hiddenSize: number } {
  const o = {
    agents: intOption(options, 'agents', 4, MIN_RELAY_AGENTS, MAX_RELAY_AGENTS),
    symbols: intOption(options, 'symbols', 4, 1),
    noise: numberOption(options, 'noise', 0, 0, 1),
    criticView: oneOfOption(options, 'criticView', ['joint', 'own'] as const, 'joint'),
    hiddenSize: hiddenSizeOption(options),
  };
  rejectUnknown(options, RELAY_GAME_OPTIONS, 'relay-game');
  return o;
}

export function relayGame(options: Options = {}): TaskBundle {
  const o = parseRelayGameOptions(options);
  const n = o.agents;
  const K = o.symbols;
  const tok = relayTokens(o);
  const names = relayAgentNames(n);

  const play = async (engine: SamplingEngine, secrets: number[], seed: number, sampling: Sampling, policies: Record<string, string>): Promise<Episode[]> => {
    const noiseRng = mulberry32(deriveSeed(seed, 0x7e1a));
    const B = secrets.length;
    const delivered: number[][] = secrets.map(() => []);
    const corrupted: boolean[][] = secrets.map(() => []);
    const records: ActionRecord[][] = secrets.map(() => []);
    for (let i = 0; i < n; i++) {
      const name = names[i]!;
      const policy = policies[name]!;
      const prompts = secrets.map((s, b) => [tok.bos, tok.tag(i), i === 0 ? tok.symbol(s) : delivered[b]![i - 1]!]);
      const out = await engine.sample(policyTarget(policy), prompts, sampleParams(sampling, 1, deriveSeed(seed, 1 + i)));
      for (let b = 0; b < B; b++) {
        const r = out[b]!;
        records[b]!.push({
          agent: name, agentIndex: i, step: 0, policy, promptTokens: prompts[b]!, actionTokens: r.tokens, behaviourLogprobs: r.logprobs,
          stopReason: r.stopReason, text: r.tokens.join(' '), localReward: 0,
          criticTokens: o.criticView === 'own' ? prompts[b]! : [tok.bos, tok.tag(0), tok.symbol(secrets[b]!), ...delivered[b]!, tok.tag(i)],
        });
        if (i === n - 1) continue;
        // Drawn for every message whatever p is, so runs that differ only in p see the same draws.
        const corrupt = noiseRng() < o.noise;
        const replacement = tok.symbol(Math.floor(noiseRng() * K));
        delivered[b]!.push(corrupt ? replacement : r.tokens[0]!);
        corrupted[b]!.push(corrupt);
      }
    }
    return secrets.map((s, b) => {
      const answer = records[b]![n - 1]!.actionTokens[0]!;
      const team = answer === tok.symbol(s) ? 1 : 0;
      // The team reward recorded raw; the trainer places it (IPPO: at every action, MARFT: once, at the last).
      return {
        problemId: `secret-${s}`,
        actions: records[b]!,
        steps: [{ t: 0, teamReward: team, done: true }],
        outcome: team,
        info: { secret: s, answer: answer - tok.symbol(0), delivered: delivered[b]!, corrupted: corrupted[b]! },
      };
    });
  };

  const shape = { agents: n, symbols: K, noise: o.noise, ...tok, names };
  const task: Task = {
    agents: names,
    ...secretGame(K, play),
    // criticView 'own' gives the centralised critic each agent's prompt: value what it reads.
    exactValues: (engine, episodes, request) => relayExactValues(engine, episodes, o.criticView === 'own' ? { ...request, view: 'own' } : request, shape),
  };
  return { task, vocabSize: tok.vocabSize, buildEngine: async (seed) => toyDecoder(tok.vocabSize, o.hiddenSize, seed) };
}
