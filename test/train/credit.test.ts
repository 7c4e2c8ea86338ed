// How rewards reach the credit chain (src/train/batch.ts) and how the joint advantage splits
// across the agents of a step (spec sections 3 and 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { train } from '../../src/run/train.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { EMPTY_MOMENTS, momentsStd, updateMoments } from '../../src/core/running-moments.ts';
import { assignCredit, flattenEpisodes, scaleRewards, type TrainAction } from '../../src/train/batch.ts';
import type { ActionRecord, Episode } from '../../src/workflow/trajectory.ts';

const AGENTS = ['planner', 'solver', 'reflector', 'verifier'];

function act(agent: string, agentIndex: number, step: number, localReward = 0, tokens = [7]): ActionRecord {
  return { agent, agentIndex, step, policy: 'p', promptTokens: [1, 2], actionTokens: tokens, behaviourLogprobs: tokens.map(() => -1), stopReason: 'stop_token', text: agent, localReward };
}

/** A Quad episode of `steps` environment steps, its rewards raw (what the runtime records): each step's team reward, each action's local reward. */
function quad(teamRewards: number[], local: Record<string, number> = {}, outcome = 1): Episode {
  const actions = teamRewards.flatMap((_, t) => AGENTS.map((a, i) => act(a, i, t, local[a] ?? 0)));
  return { problemId: 'q', actions, steps: teamRewards.map((r, t) => ({ t, teamReward: r, done: t === teamRewards.length - 1 })), outcome, info: {} };
}

// These tests place each step's own team reward (reward.team: turn; the default gives every turn the
// episode's outcome, test/train/rewards.test.ts).
const config = (advantage: Record<string, unknown> = {}) => parseConfig({ advantage: { gamma: 0.9, lambda: 0.95, gammaAgent: 1, ...advantage }, reward: { team: 'turn' } });
const plan = (name: 'marft-action' | 'marft-token' | 'ippo' | 'marft-outcome', c = config()) => ALGORITHM_REGISTRY[name].plan(AGENTS, c);

function withValues(actions: TrainAction[], values: number[]): TrainAction[] {
  actions.forEach((a, i) => (a.values_K = Float32Array.of(values[i]!)));
  return actions;
}

test('joint chain: the team reward of a step enters once, at its last action (a Quad with reward 1 returns 1, 1, 1, 1, not 4, 3, 2, 1)', () => {
  const c = config({ lambda: 1 });
  const p = plan('marft-action', c);
  const episodes = [quad([1])];
  const actions = withValues(flattenEpisodes(episodes, p, c), [0, 0, 0, 0]);
  assert.deepEqual(actions.map((a) => a.reward), [0, 0, 0, 1]);
  assignCredit(actions, episodes, p, c);
  assert.deepEqual(actions.map((a) => a.returns_K[0]), [1, 1, 1, 1]);
  // Token level places it the same way.
  assert.deepEqual(flattenEpisodes(episodes, plan('marft-token', c), c).map((a) => a.reward), [0, 0, 0, 1]);
});

test('role-local rewards enter at their own agent; independent learners (IPPO) receive team + local on every action', () => {
  const c = config();
  const episodes = [quad([1, 0.5], { solver: 0.25 })];
  assert.deepEqual(flattenEpisodes(episodes, plan('marft-action'), c).map((a) => a.reward), [0, 0.25, 0, 1, 0, 0.25, 0, 0.5]);
  assert.deepEqual(flattenEpisodes(episodes, plan('ippo'), c).map((a) => a.reward), [1, 1.25, 1, 1, 0.5, 0.75, 0.5, 0.5]);
});

test('marft-outcome: the episode outcome at the last action, not the sum of per-action rewards', () => {
  const episodes = [quad([1, 1], {}, 0.75)];
  const rewards = flattenEpisodes(episodes, plan('marft-outcome'), config()).map((a) => a.reward);
  assert.deepEqual(rewards, [0, 0, 0, 0, 0, 0, 0, 0.75]);
});

test('a step whose last agent produced no tokens still delivers its team reward, to the last action kept', () => {
  const ep = quad([1]);
  ep.actions[3] = { ...ep.actions[3]!, actionTokens: [], behaviourLogprobs: [] };
  const actions = flattenEpisodes([ep], plan('marft-action'), config());
  assert.deepEqual(actions.map((a) => [a.agent, a.reward]), [['planner', 0], ['solver', 0], ['reflector', 1]]);
});

test('decomposition (γ_agent = 1): with λ = 0 the agents’ advantages in a step add up to the joint step advantage R + γ·V(next) − V(first agent); with λ = 1 the first agent’s advantage is the joint one', () => {
  const gamma = 0.9;
  const team = [0.3, 1];
  const local = { solver: 0.2 };
  // Critic values are float32 (the engine's), so the hand computation uses the same numbers.
  const values = [0.1, -0.4, 0.7, 0.25, 0.5, 0.9, -0.2, 0.35].map(Math.fround);
  for (const lambda of [0, 1]) {
    const c = config({ gamma, lambda });
    const p = plan('marft-action', c);
    const episodes = [quad(team, local)];
    const actions = withValues(flattenEpisodes(episodes, p, c), values);
    assignCredit(actions, episodes, p, c);
    const A = actions.map((a) => a.advantages_K[0]!);
    // Joint advantage of step 0: its rewards (team once + local) + γ·V(step 1, first agent) − V(step 0, first agent); step 1 ends the episode.
    const joint0 = team[0]! + 0.2 + gamma * values[4]! - values[0]!;
    const joint1 = team[1]! + 0.2 - values[4]!;
    if (lambda === 0) {
      assert.ok(Math.abs(A.slice(0, 4).reduce((s, x) => s + x, 0) - joint0) < 1e-12, `step 0: ${A.slice(0, 4)} vs ${joint0}`);
      assert.ok(Math.abs(A.slice(4).reduce((s, x) => s + x, 0) - joint1) < 1e-12, `step 1: ${A.slice(4)} vs ${joint1}`);
      // Each share is the agent's own TD term: V(next agent) − V(own state) (+ the rewards it receives).
      assert.ok(Math.abs(A[0]! - (values[1]! - values[0]!)) < 1e-12);
      assert.ok(Math.abs(A[1]! - (0.2 + values[2]! - values[1]!)) < 1e-12);
    } else {
      assert.ok(Math.abs(A[4]! - joint1) < 1e-12, `λ = 1, last step: first agent ${A[4]} vs joint ${joint1}`);
      assert.ok(Math.abs(A[0]! - (joint0 + gamma * joint1)) < 1e-12, 'λ = 1: the first agent carries the Monte Carlo return of the episode');
    }
  }
});

test('reward scaling: zero stays zero, signs are kept, and the scale is the running deviation of every return so far', () => {
  const c = config();
  const p = plan('marft-action', c);
  const batch1 = flattenEpisodes([quad([1]), quad([0]), quad([1])], p, c);
  const s1 = scaleRewards(batch1, p, EMPTY_MOMENTS);
  assert.deepEqual(batch1.map((a) => a.reward === 0), [true, true, true, false, true, true, true, true, true, true, true, false]);
  const std1 = Math.sqrt(2 / 9); // returns 1, 0, 1
  assert.ok(Math.abs(s1.scale - 1 / std1) < 1e-12);
  const batch2 = flattenEpisodes([quad([0]), quad([0]), quad([0]), quad([1])], p, c);
  const s2 = scaleRewards(batch2, p, s1.moments);
  // The moments of both batches together, not of batch 2 alone: returns 1, 0, 1, 0, 0, 0, 1.
  const all = updateMoments(EMPTY_MOMENTS, [1, 0, 1, 0, 0, 0, 1]);
  assert.ok(Math.abs(s2.scale - 1 / momentsStd(all)) < 1e-12);
  assert.equal(s2.moments.count, 7);
  // A batch whose returns never varied yet is left unscaled (no division by zero).
  const flat = flattenEpisodes([quad([1]), quad([1])], p, c);
  assert.equal(scaleRewards(flat, p, EMPTY_MOMENTS).scale, 1);
});

test('advantage.baseline batch-mean: GAE reads one constant value per step (explained variance 0 at every position), while the critic still trains', async () => {
  const run = async (baseline: string) => {
    const c = parseConfig({
      seed: 2, model: { engine: 'tabular' }, advantage: { baseline }, actor: { klCoef: 0, optim: { lr: 0.1 } }, critic: { optim: { lr: 0.1 } },
      rollout: { batchSize: 32, maxNewTokens: 1 }, train: { steps: 12, checkpointEvery: 1000 },
    });
    const { task, vocabSize } = coordinationGame({ symbols: 4 });
    return (await train({ config: c, engine: new TabularEngine(vocabSize), task, runDir: mkdtempSync(join(tmpdir(), 'marft-baseline-')), progress: false })).metrics;
  };
  const ablated = await run('batch-mean');
  for (const m of ablated) for (const pos of [0, 1]) {
    const ev = m[`explained_variance/pos${pos}`];
    assert.ok(ev === null || Math.abs(Number(ev)) < 1e-9, `step ${m.step} pos ${pos}: ${ev}`);
  }
  assert.ok(ablated.some((m) => Number(m.value_loss) > 0), 'the critic is still trained');
  // With the critic's own values the explained variance departs from 0 (the tabular critic learns the secret's value).
  const critic = await run('critic');
  assert.ok(critic.some((m) => Math.abs(Number(m['explained_variance/pos1'] ?? 0)) > 0.05), 'the critic explains part of the returns');
});
