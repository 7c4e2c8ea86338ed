// Rewards placed once (src/train/batch.ts with src/train/rewards.ts), from the raw records a rollout
// keeps, for every placement mode and every reward setting, with the numbers computed by hand.
//
// The fixture: agents a then b over two turns; team rewards 0.2 (turn 0) and 0.6 (turn 1) as the
// environment reported them; the episode's outcome 0.8; role-local rewards a: 0.5, 0 and b: 0.25, 1.
// α = reward.teamWeight = 2 and w = reward.localWeight = 3, so every weight shows in the numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { planFor } from '../../src/algorithms/check.ts';
import type { AlgorithmName } from '../../src/config/schema.ts';
import { parseConfig } from '../../src/config/load.ts';
import { flattenEpisodes } from '../../src/train/batch.ts';
import { turnScore } from '../../src/train/rewards.ts';
import type { ActionRecord, Episode } from '../../src/workflow/trajectory.ts';

const AGENTS = ['a', 'b'];

function act(agent: string, step: number, localReward: number, extra: Partial<ActionRecord> = {}): ActionRecord {
  return { agent, agentIndex: AGENTS.indexOf(agent), step, policy: 'p', promptTokens: [1], actionTokens: [5], behaviourLogprobs: [-1], stopReason: 'stop_token', text: agent, localReward, ...extra };
}

const episode = (): Episode => ({
  problemId: 'q', group: 'g',
  actions: [act('a', 0, 0.5), act('b', 0, 0.25), act('a', 1, 0), act('b', 1, 1)],
  steps: [{ t: 0, teamReward: 0.2, done: false }, { t: 1, teamReward: 0.6, done: true }],
  outcome: 0.8, info: {},
});

const config = (reward: Record<string, unknown> = {}, algorithm: AlgorithmName = 'marft-action') =>
  parseConfig({ algorithm, rollout: { rolloutsPerPrompt: 2 }, reward: { teamWeight: 2, localWeight: 3, ...reward } });

function placed(algorithm: AlgorithmName, reward: Record<string, unknown> = {}, episodes = [episode()]) {
  const c = config(reward, algorithm);
  const actions = flattenEpisodes(episodes, ALGORITHM_REGISTRY[algorithm].plan(AGENTS, c), c);
  return { reward: actions.map((a) => a.reward), learner: actions.map((a) => a.learnerReward) };
}

function near(got: number[], want: number[], what: string): void {
  assert.equal(got.length, want.length, what);
  got.forEach((x, i) => assert.ok(Math.abs(x - want[i]!) < 1e-12, `${what}: [${got}] vs [${want}]`));
}

test('the defaults are the papers’: the episode’s outcome is every turn’s team reward, α = 1, local weight 1, broadcast', () => {
  assert.deepEqual(parseConfig({}).reward, { team: 'outcome', share: 'broadcast', teamWeight: 1, localWeight: 1 });
});

test('broadcast (ippo): every action α·T + w·local, T the outcome 0.8 by default or each turn’s own with reward.team: turn', () => {
  // outcome: α·0.8 = 1.6 at every action; + 3·(0.5, 0.25, 0, 1).
  near(placed('ippo').reward, [3.1, 2.35, 1.6, 4.6], 'outcome');
  // turn: α·(0.2, 0.2, 0.6, 0.6) = (0.4, 0.4, 1.2, 1.2); + (1.5, 0.75, 0, 3).
  near(placed('ippo', { team: 'turn' }).reward, [1.9, 1.15, 1.2, 4.2], 'turn');
  // grpo places the same way (its groups compare these).
  near(placed('grpo', { team: 'turn' }).reward, [1.9, 1.15, 1.2, 4.2], 'grpo');
});

test('broadcast with reward.share: split: the turn’s team reward shared over its two actions', () => {
  // α·T/2 = 0.2 (turn 0), 0.6 (turn 1); + (1.5, 0.75, 0, 3).
  near(placed('ippo', { team: 'turn', share: 'split' }).reward, [1.7, 0.95, 0.6, 3.6], 'turn, split');
  // The outcome split: α·0.8/2 = 0.8 at every action.
  near(placed('ippo', { share: 'split' }).reward, [2.3, 1.55, 0.8, 3.8], 'outcome, split');
});

test('step-end (marft-action, marft-token): w·local at every action, α·T once at each turn’s last action; split is refused', () => {
  near(placed('marft-action', { team: 'turn' }).reward, [1.5, 0.75 + 0.4, 0, 3 + 1.2], 'turn');
  near(placed('marft-action').reward, [1.5, 0.75 + 1.6, 0, 3 + 1.6], 'outcome');
  // A joint chain takes a turn's team reward once: split would change nothing but the metric, so it is refused in one line.
  const task = { agents: AGENTS, rewardSchemes: ['cure' as const], rollout: async () => [], evaluate: async () => [] };
  for (const algorithm of ['marft-action', 'magrpo', 'marft-outcome', 'cure'] as const) {
    assert.throws(() => planFor(config({ share: 'split' }, algorithm), task), (e: Error) => e.name === 'ConfigError' && /^reward\.share: split divides a turn's team reward among its actions where every action receives one \(ippo, grpo, at-grpo\); /.test(e.message) && !e.message.includes('\n'), algorithm);
  }
  assert.ok(planFor(config({ share: 'split' }, 'ippo'), task));
  near(placed('marft-token').reward, [1.5, 2.35, 0, 4.6], 'token level');
  // The metric reward/<agent> still reads what an independent learner would receive (the broadcast numbers).
  near(placed('marft-action').learner, [3.1, 2.35, 1.6, 4.6], 'learner reward');
});

test('teamWeight 0 leaves the team reward out; localWeight 0 the role-local rewards', () => {
  near(placed('ippo', { teamWeight: 0 }).reward, [1.5, 0.75, 0, 3], 'team out');
  near(placed('ippo', { localWeight: 0 }).reward, [1.6, 1.6, 1.6, 1.6], 'local out');
  near(placed('marft-action', { localWeight: 0, team: 'turn' }).reward, [0, 0.4, 0, 1.2], 'local out, joint chain');
});

test('outcome (marft-outcome): α·outcome at the last action only; local (cure): each action’s own reward, unweighted; none (mas-opd): 0', () => {
  near(placed('marft-outcome').reward, [0, 0, 0, 1.6], 'outcome');
  near(placed('marft-outcome', { team: 'turn' }).reward, [0, 0, 0, 1.6], 'outcome does not read reward.team');
  const cure = placed('cure');
  near(cure.reward, [0.5, 0.25, 0, 1], 'cure');
  near(cure.learner, [0.5, 0.25, 0, 1], 'cure’s reward/<agent>');
  near(placed('mas-opd').reward, [0, 0, 0, 0], 'mas-opd');
});

test('a tree’s candidate takes its own copy’s turn as T (whatever reward.team says), split over its copy’s actions', () => {
  // One turn, two copies: copy 0 (team 1, locals 0.5 / 0), copy 1 (team 3, locals 0 / 1); copy 1 continued.
  const joint = (sample: number, teamReward: number) => ({ node: '', sample, child: null, teamReward });
  const candidates = [
    act('a', 0, 0.5, { branch: { k: 0, executed: false }, joint: joint(0, 1) }), act('b', 0, 0, { branch: { k: 0, executed: false }, joint: joint(0, 1) }),
    act('a', 0, 0, { branch: { k: 1, executed: true }, joint: joint(1, 3) }), act('b', 0, 1, { branch: { k: 1, executed: true }, joint: joint(1, 3) }),
  ];
  const tree: Episode = { problemId: 'q', group: 'g', actions: candidates.slice(2), candidates, steps: [{ t: 0, teamReward: 3, done: true }], outcome: 3, info: {} };
  // at-grpo (broadcast): α·team of the copy + w·local: (2 + 1.5, 2 + 0, 6 + 0, 6 + 3).
  near(placed('at-grpo', {}, [tree]).reward, [3.5, 2, 6, 9], 'at-grpo');
  near(placed('at-grpo', { share: 'split' }, [tree]).reward, [2.5, 1, 3, 6], 'at-grpo, split within each copy');
  // magrpo's tree (step-end): w·local, α·team once at each copy's last action.
  const c = parseConfig({ algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2, jointTree: 'best' }, reward: { teamWeight: 2, localWeight: 3 } });
  const plan = ALGORITHM_REGISTRY.magrpo.plan(AGENTS, c, { agents: AGENTS, jointTreeSampling: true } as never);
  near(flattenEpisodes([tree], plan, c).map((a) => a.reward), [1.5, 2, 0, 9], 'magrpo tree');
});

test('turnScore ranks a copy by α·team + w·Σ local (its turn taken once): the tree samplers’ criterion', () => {
  const score = turnScore(config().reward);
  assert.equal(score({ teamReward: 0.5, actions: [act('a', 0, 0.5), act('b', 0, 0.25)] }), 2 * 0.5 + 3 * 0.75);
  assert.equal(turnScore(config({ share: 'split' }).reward)({ teamReward: 1, actions: [act('a', 0, 0), act('b', 0, 0)] }), 2, 'split does not divide a copy’s own score');
});
