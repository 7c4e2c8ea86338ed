// Unit tests of the relay game (src/tasks/toy/relay-game.ts): prompts, the team reward, the
// centralised critic's joint state, the environment's noise, options, and how the trainer credits
// its episodes under MARFT (joint chain) and IPPO (per-agent chains).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.ts';
import type { Engine, SampleParams, SampleResult, Target } from '../../src/engine/types.ts';
import { planFor } from '../../src/algorithms/check.ts';
import { flattenEpisodes } from '../../src/train/batch.ts';
import { taskFactory } from '../../src/run/task-registry.ts';
import { relayAgentNames, relayGame, relayTokens } from '../../src/tasks/toy/relay-game.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';

const SAMPLING = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 1 };

/** An engine whose every policy answers `reply(prompt)` deterministically (only `sample` is used by the task). */
function scriptedEngine(reply: (prompt: number[], target: Target) => number): Engine {
  const sample = async (target: Target, prompts: number[][], _p: SampleParams): Promise<SampleResult[]> =>
    prompts.map((prompt) => ({ tokens: [reply(prompt, target)], logprobs: [-1], stopReason: 'max_tokens' as const }));
  return { sample } as unknown as Engine;
}

/** Every agent passes on the token it sees (agent1 the secret's own symbol): a perfect relay. */
const copyEngine = scriptedEngine((prompt) => prompt[2]!);

async function rollout(options: Record<string, unknown>, engine: Engine, batchSize = 64, seed = 11): Promise<Episode[]> {
  const { task } = relayGame(options);
  const policies = Object.fromEntries(task.agents.map((a) => [a, `policy-${a}`]));
  return task.rollout(engine, { step: 0, seed, batchSize, rolloutsPerPrompt: 1, sampling: SAMPLING, policies });
}

test('relay game: token layout, agent names, registration', () => {
  const tok = relayTokens({ agents: 4, symbols: 3 });
  assert.deepEqual([tok.tag(0), tok.tag(3), tok.symbol(0), tok.symbol(2), tok.vocabSize], [1, 4, 5, 7, 8]);
  assert.deepEqual(relayAgentNames(3), ['agent1', 'agent2', 'agent3']);
  const bundle = relayGame({ agents: 5, symbols: 2 });
  assert.deepEqual(bundle.task.agents, ['agent1', 'agent2', 'agent3', 'agent4', 'agent5']);
  assert.equal(bundle.vocabSize, 1 + 5 + 2);
  assert.ok(taskFactory('relay-game'), 'registered in src/run/task-registry.ts');
});

test('relay game: a perfect relay always scores 1; each agent sees only its predecessor; the team reward is the step’s, no local reward', async () => {
  const tok = relayTokens({ agents: 4, symbols: 4 });
  const episodes = await rollout({ agents: 4, symbols: 4 }, copyEngine);
  assert.equal(episodes.length, 64);
  for (const ep of episodes) {
    const s = ep.info.secret as number;
    assert.equal(ep.outcome, 1);
    assert.deepEqual(ep.steps, [{ t: 0, teamReward: 1, done: true }]);
    assert.deepEqual(ep.actions.map((a) => a.promptTokens), [[0, 1, tok.symbol(s)], [0, 2, tok.symbol(s)], [0, 3, tok.symbol(s)], [0, 4, tok.symbol(s)]]);
    assert.deepEqual(ep.actions.map((a) => [a.agent, a.agentIndex, a.step, a.localReward]), [['agent1', 0, 0, 0], ['agent2', 1, 0, 0], ['agent3', 2, 0, 0], ['agent4', 3, 0, 0]]);
    assert.equal(ep.problemId, `secret-${s}`);
  }
  assert.equal(new Set(episodes.map((e) => e.info.secret)).size, 4, 'secrets are drawn from all K');
});

test('relay game: the team reward is 1 exactly when the last answer is the secret', async () => {
  // agent1 sends symbol 0 whatever the secret; the others copy: only secret 0 is answered right.
  const tok = relayTokens({ agents: 3, symbols: 4 });
  const engine = scriptedEngine((prompt) => (prompt[1] === tok.tag(0) ? tok.symbol(0) : prompt[2]!));
  const episodes = await rollout({ agents: 3, symbols: 4 }, engine);
  for (const ep of episodes) {
    assert.equal(ep.outcome, ep.info.secret === 0 ? 1 : 0);
    assert.equal(ep.info.answer, 0);
    assert.deepEqual(ep.steps.map((s) => s.teamReward), [ep.outcome]);
  }
  assert.ok(episodes.some((e) => e.outcome === 0) && episodes.some((e) => e.outcome === 1));
});

test('relay game: the critic joint state is the secret plus every earlier delivered message, then the next tag', async () => {
  // Agent i sends symbol i (ignoring its input), so every message is known.
  const tok = relayTokens({ agents: 4, symbols: 5 });
  const engine = scriptedEngine((prompt) => tok.symbol(prompt[1]! - 1));
  const [ep] = await rollout({ agents: 4, symbols: 5 }, engine, 1);
  const s = tok.symbol(ep!.info.secret as number);
  assert.deepEqual(ep!.actions.map((a) => a.criticTokens), [
    [0, 1, s, 1],
    [0, 1, s, tok.symbol(0), 2],
    [0, 1, s, tok.symbol(0), tok.symbol(1), 3],
    [0, 1, s, tok.symbol(0), tok.symbol(1), tok.symbol(2), 4],
  ]);
  // Every agent's own prompt: only the message of its predecessor (IPPO's critic input).
  const own = [[0, 1, s], [0, 2, tok.symbol(0)], [0, 3, tok.symbol(1)], [0, 4, tok.symbol(2)]];
  assert.deepEqual(ep!.actions.map((a) => a.promptTokens), own);
  // The ablation: the same episode with the critic given each agent's own prompt.
  const [ablated] = await rollout({ agents: 4, symbols: 5, criticView: 'own' }, engine, 1);
  assert.equal(ablated!.info.secret, ep!.info.secret);
  assert.deepEqual(ablated!.actions.map((a) => a.criticTokens), own);
});

test('relay game: noise replaces messages by uniform symbols before delivery; what is delivered is what the next agent and the critic see', async () => {
  const tok = relayTokens({ agents: 4, symbols: 4 });
  const clean = await rollout({ agents: 4, symbols: 4, noise: 0 }, copyEngine, 256);
  assert.ok(clean.every((e) => (e.info.corrupted as boolean[]).every((c) => !c)));
  const noisy = await rollout({ agents: 4, symbols: 4, noise: 0.3 }, copyEngine, 256);
  let corruptions = 0;
  let messages = 0;
  for (const ep of noisy) {
    const delivered = ep.info.delivered as number[];
    const corrupted = ep.info.corrupted as boolean[];
    assert.equal(delivered.length, 3, 'agents 1..n−1 send messages; the last one answers');
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(ep.actions[i + 1]!.promptTokens, [0, tok.tag(i + 1), delivered[i]]);
      assert.equal(ep.actions[i + 1]!.criticTokens![3 + i], delivered[i]);
      if (corrupted[i]) assert.ok(delivered[i]! >= tok.symbol(0) && delivered[i]! < tok.vocabSize, 'a replacement is a symbol');
      else assert.equal(delivered[i], ep.actions[i]!.actionTokens[0]);
      messages++;
      if (corrupted[i]) corruptions++;
    }
    // A copying relay answers whatever reached the last agent.
    assert.equal(ep.outcome, delivered[2] === tok.symbol(ep.info.secret as number) ? 1 : 0);
  }
  // 768 Bernoulli(0.3) draws: 0.3 ± 0.05 is over three standard deviations (0.017).
  assert.ok(Math.abs(corruptions / messages - 0.3) < 0.05, `corruption rate ${corruptions / messages}`);
  assert.ok(noisy.some((e) => e.outcome === 0), 'noise breaks a perfect relay');
  // The same seed draws the same uniforms: a larger p corrupts a superset of the messages.
  const noisier = await rollout({ agents: 4, symbols: 4, noise: 0.6 }, copyEngine, 256);
  noisy.forEach((ep, b) => (ep.info.corrupted as boolean[]).forEach((c, i) => assert.ok(!c || (noisier[b]!.info.corrupted as boolean[])[i])));
  const all = await rollout({ agents: 4, symbols: 4, noise: 1 }, copyEngine, 256);
  assert.ok(all.every((e) => (e.info.corrupted as boolean[]).every((c) => c)));
});

test('relay game: evaluation episodes are every secret 16 times; problems caps them', async () => {
  const { task } = relayGame({ agents: 2, symbols: 3 });
  const policies = { agent1: 'p1', agent2: 'p2' };
  const all = await task.evaluate(copyEngine, { seed: 1, sampling: SAMPLING, problems: 0, policies });
  assert.equal(all.length, 48);
  for (let k = 0; k < 3; k++) assert.equal(all.filter((e) => e.info.secret === k).length, 16);
  assert.ok(all.every((e) => e.outcome === 1));
  assert.equal((await task.evaluate(copyEngine, { seed: 1, sampling: SAMPLING, problems: 5, policies })).length, 5);
});

test('relay game: options are checked with one-line errors', () => {
  assert.throws(() => relayGame({ agents: 1 }), /task\.options\.agents: got 1, expected an integer in 2\.\.6/);
  assert.throws(() => relayGame({ agents: 7 }), /task\.options\.agents: got 7/);
  assert.throws(() => relayGame({ noise: 1.5 }), /task\.options\.noise: got 1\.5, expected a number in \[0, 1\]/);
  assert.throws(() => relayGame({ hiddenSize: 6 }), /task\.options\.hiddenSize: got 6, expected a positive multiple of 4/);
  assert.throws(() => relayGame({ criticView: 'secret' }), /task\.options\.criticView: got "secret", expected one of 'joint', 'own'/);
  assert.throws(() => relayGame({ secret: 1 }), /task\.options\.secret: unknown option of relay-game \(known: agents, symbols, noise, criticView, hiddenSize\)/);
});

test('relay game under the trainer: MARFT puts the team reward once at the last agent and values the joint state; IPPO broadcasts and values own prompts', async () => {
  const bundle = relayGame({ agents: 3, symbols: 4 });
  const episodes = await rollout({ agents: 3, symbols: 4 }, copyEngine, 4);
  for (const algorithm of ['marft-action', 'ippo'] as const) {
    const config = parseConfig({ algorithm, model: { engine: 'tabular' }, policy: { parameterSharing: false } });
    const actions = flattenEpisodes(episodes, planFor(config, bundle.task), config);
    assert.equal(actions.length, 12);
    for (const a of actions) {
      const record = episodes[a.episode]!.actions[a.agentIndex]!;
      if (algorithm === 'ippo') {
        assert.equal(a.reward, 1);
        assert.equal(a.critic, `critic-${a.agent}`);
        assert.deepEqual(a.criticTokens, record.promptTokens);
      } else {
        assert.equal(a.reward, a.agentIndex === 2 ? 1 : 0);
        assert.equal(a.critic, 'critic');
        assert.deepEqual(a.criticTokens, record.criticTokens);
      }
    }
  }
});
