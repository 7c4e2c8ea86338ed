// The advantage estimators of the GRPO family and MAGRPO (src/train/credit/), by hand-computed
// cases, and the episode groups they compare within (src/train/episode-groups.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import type { AlgorithmPlan } from '../../src/algorithms/types.ts';
import { parseConfig } from '../../src/config/load.ts';
import { episodeGroups, tagGroups } from '../../src/train/episode-groups.ts';
import { assignCredit, flattenEpisodes } from '../../src/train/batch.ts';
import type { ActionRecord, Episode } from '../../src/workflow/trajectory.ts';

function act(agent: string, agentIndex: number, step: number, localReward = 0, tokens = [7]): ActionRecord {
  return { agent, agentIndex, step, policy: 'p', promptTokens: [1, 2], actionTokens: tokens, behaviourLogprobs: tokens.map(() => -1), stopReason: 'stop_token', text: agent, localReward };
}

/** A one-agent, one-turn episode: one response with reward r. */
function single(problemId: string, group: string, r: number, tokens = [7]): Episode {
  return { problemId, group, actions: [act('solver', 0, 0, 0, tokens)], steps: [{ t: 0, teamReward: r, done: true }], outcome: r, info: {} };
}

/** A two-agent episode over several turns; teamRewards[t] is turn t's team reward (raw, as the runtime records it). */
function duo(problemId: string, group: string, teamRewards: number[]): Episode {
  const actions = teamRewards.flatMap((_, t) => [act('a', 0, t), act('b', 1, t)]);
  return { problemId, group, actions, steps: teamRewards.map((r, t) => ({ t, teamReward: r, done: t === teamRewards.length - 1 })), outcome: teamRewards.at(-1)!, info: {} };
}

// Every configuration here credits each turn its own team reward (reward.team: turn; the default, the
// episode's outcome at every turn, is test/train/rewards.test.ts's).
const config = (extra: Record<string, unknown> = {}) => parseConfig({ reward: { team: 'turn' }, algorithm: 'grpo', rollout: { rolloutsPerPrompt: 4 }, ...extra });
const planOf = (name: 'grpo' | 'magrpo', agents: string[], c = config()): AlgorithmPlan => ALGORITHM_REGISTRY[name].plan(agents, c);

function credit(name: 'grpo' | 'magrpo', agents: string[], episodes: Episode[], c = config()) {
  const plan = planOf(name, agents, c);
  const actions = flattenEpisodes(episodes, plan, c);
  assignCredit(actions, episodes, plan, c);
  return actions;
}

const close = (actual: ArrayLike<number>, expected: number[], tol = 1e-6) => {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) <= tol, `[${i}] ${actual[i]} vs ${expected[i]}`);
};

test('GRPO: (r − group mean) / (group std + eps), the same for every token of a response', () => {
  // Group of 4: rewards 1, 0, 0, 1 → mean 0.5, population std 0.5 → ±1 (up to eps = 1e-6).
  const episodes = [single('q', 'g', 1, [5, 6, 7]), single('q', 'g', 0, [5]), single('q', 'g', 0, [5, 6]), single('q', 'g', 1)];
  const actions = credit('grpo', ['solver'], episodes);
  const a = 0.5 / (0.5 + 1e-6);
  close(actions[0]!.advantages_K, [a, a, a]);
  close(actions[1]!.advantages_K, [-a]);
  close(actions[2]!.advantages_K, [-a, -a]);
  close(actions[3]!.advantages_K, [a]);
  // The no-std variant: only the mean is subtracted.
  const noStd = credit('grpo', ['solver'], episodes, config({ advantage: { groupScale: 'none' } }));
  assert.deepEqual(noStd.map((x) => Array.from(x.advantages_K)), [[0.5, 0.5, 0.5], [-0.5], [-0.5, -0.5], [0.5]]);
});

test('GRPO: a group whose rewards are all equal, and a group of one, get advantage 0 (never NaN)', () => {
  const actions = credit('grpo', ['solver'], [single('q', 'g1', 0.7), single('q', 'g1', 0.7), single('q', 'g1', 0.7), single('r', 'g2', 3)]);
  for (const a of actions) assert.deepEqual(Array.from(a.advantages_K), [0]);
  const noStd = credit('grpo', ['solver'], [single('q', 'g1', 0.7), single('q', 'g1', 0.7), single('r', 'g2', 3)], config({ advantage: { groupScale: 'none' } }));
  for (const a of noStd) assert.deepEqual(Array.from(a.advantages_K), [0]);
});

test('GRPO: groups of one batch are keyed by Episode.group, not by problem or by order', () => {
  // Problem q drawn twice in one step (groups g1 and g2), interleaved with problem r (g3).
  const episodes = [single('q', 'g1', 1), single('r', 'g3', 0), single('q', 'g2', 0), single('q', 'g1', 0), single('q', 'g2', 0), single('r', 'g3', 1)];
  const actions = credit('grpo', ['solver'], episodes, config({ advantage: { groupScale: 'none' } }));
  // g1 = {1, 0} → ±0.5; g2 = {0, 0} → 0; g3 = {0, 1} → ∓0.5. Keyed by problem, q would be {1, 0, 0, 0}.
  assert.deepEqual(actions.map((a) => a.advantages_K[0]), [0.5, -0.5, 0, -0.5, 0, 0.5]);
  assert.deepEqual(episodeGroups(episodes).map((g) => [g.key, g.problemId, g.episodes]), [['g1', 'q', [0, 3]], ['g3', 'r', [1, 5]], ['g2', 'q', [2, 4]]]);
});

test('MAS+GRPO: each role is compared only with its own responses to the same problem, every turn together (advantage.groupBy: role-turn per turn)', () => {
  // Two episodes of one problem, two agents, team reward 0 and local rewards that differ by role.
  const ep = (ra: number, rb: number): Episode => ({
    problemId: 'q', group: 'g', actions: [act('a', 0, 0, ra), act('b', 1, 0, rb)], steps: [{ t: 0, teamReward: 0, done: true }], outcome: 0, info: {},
  });
  const actions = credit('grpo', ['a', 'b'], [ep(1, 10), ep(0, 20)], config({ advantage: { groupScale: 'none' } }));
  // a: {1, 0} → ±0.5; b: {10, 20} → ∓5 (mixing roles would give a mean of 7.75).
  assert.deepEqual(actions.map((a) => `${a.agent}:${a.advantages_K[0]}`), ['a:0.5', 'b:-5', 'a:-0.5', 'b:5']);
  // By default a role's turns form one group (the MAS-OPD paper's MAS+GRPO has no turn-wise
  // grouping): agent a's rewards over both episodes and turns are {0, 1, 1, 1}, mean 3/4.
  const episodes = [duo('q', 'g', [0, 1]), duo('q', 'g', [1, 1])];
  assert.equal(planOf('grpo', ['a', 'b']).groupKey, 'role');
  const roles = credit('grpo', ['a', 'b'], episodes, config({ advantage: { groupScale: 'none' } }));
  assert.deepEqual(roles.map((a) => a.advantages_K[0]), [-0.75, -0.75, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]);
  // advantage.groupBy: role-turn compares only the responses of the same turn: turn 0 {0, 1} → ∓0.5, turn 1 {1, 1} → 0.
  const turns = credit('grpo', ['a', 'b'], episodes, config({ advantage: { groupScale: 'none', groupBy: 'role-turn' } }));
  assert.deepEqual(turns.map((a) => a.advantages_K[0]), [-0.5, -0.5, 0, 0, 0.5, 0.5, 0, 0]);
  // With the std: {0, 1, 1, 1} has population std √3/4, so a's turn-0 response in episode 0 gets −0.75/(√3/4) = −√3.
  const scaled = credit('grpo', ['a', 'b'], episodes);
  close(scaled.map((a) => a.advantages_K[0]!), [-0.75, -0.75, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25].map((x) => x / (Math.sqrt(3) / 4 + 1e-6)));
});

test('AT-GRPO: (r − mean)/(std + eps) per (problem, turn, agent) with the unbiased std, as verl and TRL compute it', () => {
  const c = parseConfig({ algorithm: 'at-grpo', rollout: { rolloutsPerPrompt: 4 } });
  const plan = ALGORITHM_REGISTRY['at-grpo'].plan(['solver'], c);
  assert.deepEqual([plan.groupKey, plan.groupDeviation, plan.dualClip, plan.kl], ['role-turn', 'unbiased', 3, false]);
  // One tree, four candidates of turn 0 with rewards 1, 0, 0, 1: mean 1/2, unbiased std √((4 · 1/4)/3) = 1/√3,
  // so ±(1/2)·√3 = ±0.866 (the population std 1/2 would give ±1); two candidates of turn 1: 2 and 0,
  // mean 1, unbiased std √2 → ±1/√2.
  const cands = [act('solver', 0, 0, 1), act('solver', 0, 0, 0), act('solver', 0, 0, 0), act('solver', 0, 0, 1), act('solver', 0, 1, 2), act('solver', 0, 1, 0)];
  const tree: Episode = { problemId: 'q', group: 'g', actions: [cands[0]!, cands[4]!], candidates: cands, steps: [{ t: 0, teamReward: 1, done: false }, { t: 1, teamReward: 2, done: true }], outcome: 2, info: {} };
  const actions = flattenEpisodes([tree], plan, c);
  assignCredit(actions, [tree], plan, c);
  const s0 = 1 / Math.sqrt(3) + 1e-6;
  const s1 = Math.SQRT2 + 1e-6;
  close(actions.map((a) => a.advantages_K[0]!), [0.5 / s0, -0.5 / s0, -0.5 / s0, 0.5 / s0, 1 / s1, -1 / s1]);
});

test('MAGRPO: per-turn return-to-go with γ, minus the node mean (no std), shared by the agents of a joint sample', () => {
  const c = parseConfig({ reward: { team: 'turn' }, algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2 }, advantage: { gamma: 0.5 } });
  // Two joint samples of one problem, two turns each: team rewards [1, 2] and [0, 4].
  // Returns: sample 1: G_1 = 2, G_0 = 1 + 0.5·2 = 2; sample 2: G_1 = 4, G_0 = 0 + 0.5·4 = 2.
  // Node (g, 0): mean 2 → advantages 0, 0; node (g, 1): mean 3 → −1, +1.
  const episodes = [duo('q', 'g', [1, 2]), duo('q', 'g', [0, 4])];
  const actions = credit('magrpo', ['a', 'b'], episodes, c);
  // The team reward is placed once per turn (step-end), so the turn's joint reward is not doubled.
  assert.deepEqual(actions.map((a) => a.reward), [0, 1, 0, 2, 0, 0, 0, 4]);
  assert.deepEqual(actions.map((a) => a.returns_K[0]), [2, 2, 2, 2, 2, 2, 4, 4]);
  assert.deepEqual(actions.map((a) => a.advantages_K[0]), [0, 0, -1, -1, 0, 0, 1, 1]);
  // With γ = 1 the first turn's returns are 3 and 4: advantages ∓0.5 for both agents.
  const undiscounted = credit('magrpo', ['a', 'b'], episodes, parseConfig({ reward: { team: 'turn' }, algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2 }, advantage: { gamma: 1 } }));
  assert.deepEqual(undiscounted.map((a) => a.advantages_K[0]), [-0.5, -0.5, -1, -1, 0.5, 0.5, 1, 1]);
});

test('MAGRPO: an episode that ended early is in its node only for the turns it reached; a singleton node gets 0', () => {
  const c = parseConfig({ reward: { team: 'turn' }, algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2 }, advantage: { gamma: 1 } });
  const actions = credit('magrpo', ['a', 'b'], [duo('q', 'g', [1]), duo('q', 'g', [0, 3])], c);
  // Turn 0: returns 1 and 3 → ∓1; turn 1: only the second sample (return 3) → 0.
  assert.deepEqual(actions.map((a) => a.advantages_K[0]), [-1, -1, 1, 1, 0, 0]);
  for (const a of actions) assert.ok(Number.isFinite(a.advantages_K[0]!));
});

test('MAGRPO cross joint actions: every combination scored by the task, each sample credited over its joint samples (hand-computed, 2 agents, G = 2)', () => {
  // Agent a drew tokens [3] (episode 0) and [4] (episode 1); agent b drew [5] and [6].
  // The task's team reward R(a, b) (no local rewards): R(3,5) = 1, R(3,6) = 3, R(4,5) = 0, R(4,6) = 2.
  const R: Record<string, number> = { '3,5': 1, '3,6': 3, '4,5': 0, '4,6': 2 };
  const ep = (ta: number, tb: number): Episode => {
    const r = R[`${ta},${tb}`]!;
    return { problemId: 'q', group: 'g', actions: [act('a', 0, 0, 0, [ta]), act('b', 1, 0, 0, [tb])], steps: [{ t: 0, teamReward: r, done: true }], outcome: r, info: {} };
  };
  const episodes = [ep(3, 5), ep(4, 6)];
  const scored: string[] = [];
  const task = {
    jointRewards: (_e: Episode, xs: readonly { agent: string; tokens: readonly number[] }[]) => {
      scored.push(xs.map((x) => `${x.agent}${x.tokens[0]}`).join('+'));
      return { teamReward: R[xs.map((x) => x.tokens[0]).join(',')]!, localRewards: xs.map(() => 0) };
    },
  };
  const run = (jointActions: 'aligned' | 'cross') => {
    const c = parseConfig({ reward: { team: 'turn' }, algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2 }, advantage: { jointActions } });
    const plan = planOf('magrpo', ['a', 'b'], c);
    const actions = flattenEpisodes(episodes, plan, c);
    assignCredit(actions, episodes, plan, c, task);
    return actions.map((x) => `${x.agent}${x.tokens.at(-1)}:${x.advantages_K[0]}/${x.returns_K[0]}`);
  };
  // Aligned: joint samples (3,5) → 1 and (4,6) → 2, mean 1.5: −0.5 for both agents of the first, +0.5 of the second.
  assert.deepEqual(run('aligned'), ['a3:-0.5/1', 'b5:-0.5/1', 'a4:0.5/2', 'b6:0.5/2']);
  assert.deepEqual(scored, [], 'aligned scores nothing');
  // Cross: 4 joint samples, mean (1 + 3 + 0 + 2) / 4 = 1.5.
  //   a3 in (3,5), (3,6): mean 2 → +0.5;   a4 in (4,5), (4,6): mean 1 → −0.5;
  //   b5 in (3,5), (4,5): mean 0.5 → −1;   b6 in (3,6), (4,6): mean 2.5 → +1.
  // a3's sign flips: with b6 it does better than a4 does, which the aligned pairing hides.
  assert.deepEqual(run('cross'), ['a3:0.5/2', 'b5:-1/0.5', 'a4:-0.5/1', 'b6:1/2.5']);
  assert.deepEqual(scored, ['a3+b5', 'a3+b6', 'a4+b5', 'a4+b6'], 'every combination once, agents in execution order');
  // A multi-turn episode cannot be crossed.
  const c = parseConfig({ reward: { team: 'turn' }, algorithm: 'magrpo', rollout: { rolloutsPerPrompt: 2 }, advantage: { jointActions: 'cross' } });
  const twoTurns = [duo('q', 'g', [1, 2]), duo('q', 'g', [0, 4])];
  const plan = planOf('magrpo', ['a', 'b'], c);
  assert.throws(() => assignCredit(flattenEpisodes(twoTurns, plan, c), twoTurns, plan, c, task), /single-turn episodes only/);
});

test('without a critic no action is dropped, none carries a critic or old values', () => {
  const episodes = [duo('q', 'g', [1]), duo('q', 'g', [0])];
  for (const name of ['grpo', 'magrpo'] as const) {
    const actions = credit(name, ['a', 'b'], episodes);
    assert.equal(actions.length, 4, name);
    for (const a of actions) {
      assert.equal(a.critic, null);
      assert.equal(a.values_K.length, 0);
      assert.equal(a.group, 'g');
    }
  }
});

test('episode groups: a task that tags no group cannot run a group algorithm; a group may not mix problems', () => {
  const untagged: Episode = { ...single('q', 'g', 1) };
  delete untagged.group;
  assert.throws(() => episodeGroups([single('q', 'g', 1), untagged]), /episode 1 \(problem 'q'\) has no group key/);
  assert.throws(() => episodeGroups([single('q', 'g', 1), single('r', 'g', 1)]), /group 'g' mixes problems 'q' and 'r'/);
  assert.throws(() => credit('grpo', ['solver'], [untagged]), /no episode group/);
  // tagGroups keys by the problem index the task drew, whatever the episodes' order.
  const tagged = tagGroups([single('q', 'x', 0), single('q', 'x', 0), single('q', 'x', 0)], [1, 0, 1]);
  assert.deepEqual(tagged.map((e) => e.group), ['problem-1', 'problem-0', 'problem-1']);
});
