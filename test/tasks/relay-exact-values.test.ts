// The relay game's exact state values (src/tasks/toy/relay-exact-values.ts): a case computed by hand,
// and the values against the outcomes of sampled episodes on the task's own tiny decoder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SamplingEngine, ScoreRequest, Target } from '../../src/engine/types.ts';
import { relayGame, relayTokens } from '../../src/tasks/toy/relay-game.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';

const SAMPLING = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 1 };

test('exact values by hand: 2 agents, 2 symbols, noise 0.5', async () => {
  // Tokens: 0 BOS, 1–2 the tags, 3–4 the symbols. agent1 sends its secret's symbol with probability
  // 0.8 (the other 0.2); agent2 answers the symbol it received with 0.9 (the other 0.1), and either
  // symbol with 0.5 after anything else.
  const tok = relayTokens({ agents: 2, symbols: 2 });
  const prob = (policy: string, x: number, a: number): number => {
    const isSymbol = x === 3 || x === 4;
    if (a !== 3 && a !== 4) return 0;
    if (policy === 'p1') return isSymbol ? (a === x ? 0.8 : 0.2) : 0.5;
    return isSymbol ? (a === x ? 0.9 : 0.1) : 0.5;
  };
  const engine = {
    score: async (target: Target, batch: ScoreRequest[]) => batch.map((r) => Float32Array.of(Math.log(prob((target as { name: string }).name, r.tokens[2]!, r.tokens[3]!)))),
  } as unknown as SamplingEngine;
  const { task } = relayGame({ agents: 2, symbols: 2, noise: 0.5 });
  const episode = (secret: number, delivered: number): Episode => ({
    problemId: `secret-${secret}`, outcome: 0, steps: [], info: { secret },
    actions: [
      { agent: 'agent1', agentIndex: 0, promptTokens: [0, tok.tag(0), tok.symbol(secret)] },
      { agent: 'agent2', agentIndex: 1, promptTokens: [0, tok.tag(1), delivered] },
    ],
  }) as unknown as Episode;
  const episodes = [episode(0, 3), episode(0, 4), episode(1, 4), episode(0, 0)];
  const request = { policies: { agent1: 'p1', agent2: 'p2' }, sampling: SAMPLING };
  // Joint: agent2's value is its chance of answering the secret from what it received (0.9, 0.1, 0.9,
  // 0.5); agent1's: 0.8·(0.5·0.9 + 0.25·0.9 + 0.25·0.1) + 0.2·(0.5·0.1 + 0.25·0.9 + 0.25·0.1) = 0.62.
  const joint = await task.exactValues!(engine, episodes, { ...request, view: 'joint' });
  const close = (got: number[][], want: number[][]) => got.forEach((row, e) => row.forEach((v, i) => assert.ok(Math.abs(v - want[e]![i]!) < 1e-6, `episode ${e} action ${i}: ${v} vs ${want[e]![i]}`)));
  close(joint!, [[0.62, 0.9], [0.62, 0.1], [0.62, 0.9], [0.62, 0.5]]);
  // Own view: agent2 receives symbol k from secret k with 0.8·0.75 + 0.2·0.25 = 0.65, from the other
  // with 0.35, so its value is 0.65·0.9 + 0.35·0.1 = 0.62 for either symbol; BOS is never delivered
  // (valued 0); agent1's prompt is the joint state.
  const own = await task.exactValues!(engine, episodes, { ...request, view: 'own' });
  close(own!, [[0.62, 0.62], [0.62, 0.62], [0.62, 0.62], [0.62, 0]]);
  // A truncated or greedy sampler is not enumerated.
  assert.equal(await task.exactValues!(engine, episodes, { ...request, sampling: { ...SAMPLING, topK: 2 }, view: 'joint' }), null);
  assert.equal(await task.exactValues!(engine, episodes, { ...request, sampling: { ...SAMPLING, temperature: 0 }, view: 'joint' }), null);
});

test('exact values against sampled outcomes: in every state the mean outcome is the value (3 agents, noise 0.2)', async () => {
  // Peaked policies over the symbols 4–5 (tokens: 0 BOS, 1–3 the tags): agent i passes on the symbol
  // it received with probability 0.8, 0.7, 0.9, and any symbol with 0.5 after anything else.
  const keep = [0.8, 0.7, 0.9];
  const prob = (agent: number, x: number, a: number): number => {
    if (a !== 4 && a !== 5) return 0;
    if (x !== 4 && x !== 5) return 0.5;
    return a === x ? keep[agent]! : 1 - keep[agent]!;
  };
  let state = 12345;
  const uniform = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const agentOf = (target: Target) => Number((target as { name: string }).name.slice(1));
  const engine = {
    sample: async (target: Target, prompts: number[][]) => prompts.map((p) => {
      const a = uniform() < prob(agentOf(target), p[2]!, p[2]!) ? p[2]! : p[2] === 4 ? 5 : 4;
      return { tokens: [a], logprobs: [Math.log(prob(agentOf(target), p[2]!, a))], stopReason: 'max_tokens' as const };
    }),
    score: async (target: Target, batch: ScoreRequest[]) => batch.map((r) => Float32Array.of(Math.log(prob(agentOf(target), r.tokens[2]!, r.tokens[3]!)))),
  } as unknown as SamplingEngine;
  const { task } = relayGame({ agents: 3, symbols: 2, noise: 0.2 });
  const policies = { agent1: 'p0', agent2: 'p1', agent3: 'p2' };
  const episodes = await task.rollout(engine as never, { step: 0, seed: 3, batchSize: 8192, rolloutsPerPrompt: 1, sampling: SAMPLING, policies });
  const values = (await task.exactValues!(engine, episodes, { policies, sampling: SAMPLING, view: 'joint' }))!;
  // Bucket the episodes by the joint state before each agent (secret, messages delivered so far).
  const buckets = new Map<string, { value: number; outcomes: number[] }>();
  episodes.forEach((ep, e) => ep.actions.forEach((a, i) => {
    const info = ep.info as { secret: number; delivered: number[] };
    const key = `${i}|${info.secret}|${info.delivered.slice(0, i).join(',')}`;
    const b = buckets.get(key) ?? { value: values[e]![i]!, outcomes: [] };
    assert.equal(b.value, values[e]![i]!, `one value per joint state (${key})`);
    b.outcomes.push(ep.outcome);
    buckets.set(key, b);
  }));
  let checked = 0;
  for (const [key, b] of buckets) {
    if (b.outcomes.length < 200) continue;
    const m = b.outcomes.reduce((s, x) => s + x, 0) / b.outcomes.length;
    const se = Math.sqrt(Math.max(b.value * (1 - b.value), 1e-4) / b.outcomes.length);
    assert.ok(Math.abs(m - b.value) < 5 * se, `${key}: mean outcome ${m.toFixed(4)} over ${b.outcomes.length}, exact ${b.value.toFixed(4)}`);
    checked++;
  }
  assert.ok(checked >= 10, `${checked} states with 200 episodes or more`);
});
