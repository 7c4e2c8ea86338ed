// Tree sampling (src/workflow/tree-sampling.ts), AT-GRPO's sampler, with hand-computed numbers:
// a two-agent sequential workflow (a then b) over two turns, a copyable environment whose rewards
// are the numbers the agents write, and a script whose K = 3 copies are fixed: in copy k, a writes
// A[k] and b writes B[k].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { bestCandidate, ScriptedSampler, treeRollout, type TurnScore } from '../../src/workflow/index.ts';
import { tagGroups } from '../../src/train/episode-groups.ts';
import { responseGroupKey } from '../../src/train/credit/group-relative.ts';
import { groupRelativeAdvantages } from '../../src/core/statistics.ts';
import { flattenEpisodes } from '../../src/train/batch.ts';
import { flatGroups } from '../../src/train/credit/flat-groups.ts';
import { turnScore } from '../../src/train/rewards.ts';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import { PARAMS } from './fake-env.ts';
import { SumEnv, sumWorkflow } from './sum-env.ts';

const tok = new CharTokenizer();

const workflow = sumWorkflow;

// Copy k: a writes A[k], b writes B[k] (the K copies of a tree are rows k of a call, tree-major).
const A = [1, 3, 2];
const B = [5, 4, 6];
const K = 3;
/** The trainer's ranking under the default settings (α = 1, local weight 1): (A + B) + A + B. */
const DEFAULT_SCORE = turnScore(parseConfig({}).reward);

async function play(problems: string[], score: TurnScore = DEFAULT_SCORE) {
  const sampler = new ScriptedSampler(tok, (r) => String((r.meta!.agent === 'a' ? A : B)[r.row % K]));
  const envs = problems.map((p) => new SumEnv(p, `problem ${p}`));
  const episodes = await treeRollout(workflow, envs, { sampler, tokenizer: tok, params: PARAMS, criticView: false, branches: K, score });
  return { episodes, envs, sampler };
}

test('one whole copy is executed, the one whose turn scores best; every copy’s actions are kept with raw rewards', async () => {
  const { episodes } = await play(['p0']);
  const ep = episodes[0]!;
  // Copy k's turn: team A[k] + B[k] = (6, 7, 8), locals A[k] and B[k]; its score α·team + w·(A + B) = (12, 14, 16):
  // copy 2 (a wrote 2, b wrote 6) is executed. Agent by agent, a's own reward (A + B) + A = (7, 10, 10)
  // would pick a's 3 from copy 1 and pair it with b's 6 from copy 2, a turn nobody played.
  const turn = (t: number) => ep.candidates!.filter((c) => c.step === t).map((c) => [c.agent, c.text, c.localReward, c.joint!.teamReward, c.branch!.k, c.branch!.executed]);
  for (const t of [0, 1]) {
    assert.deepEqual(turn(t), [
      ['a', '1', 1, 6, 0, false], ['b', '5', 5, 6, 0, false],
      ['a', '3', 3, 7, 1, false], ['b', '4', 4, 7, 1, false],
      ['a', '2', 2, 8, 2, true], ['b', '6', 6, 8, 2, true],
    ]);
  }
  // The tree: turn 0 is the root node, turn 1 the node grown from copy 2, where the episode ends.
  assert.deepEqual([...new Set(ep.candidates!.map((c) => `${c.joint!.node}>${c.joint!.child}`))], ['>2', '2>null']);
  // The executed path is copy 2 at both turns, and its environment saw exactly those two turns.
  assert.deepEqual(ep.actions.map((a) => [a.step, a.agent, a.text]), [[0, 'a', '2'], [0, 'b', '6'], [1, 'a', '2'], [1, 'b', '6']]);
  assert.deepEqual(ep.steps.map((s) => [s.t, s.teamReward, s.done]), [[0, 8, false], [1, 8, true]]);
  assert.equal(ep.outcome, 2, 'SumEnv scores the turns it saw: the continued copy saw both');
  // The executed candidates carry the sampled tokens and behaviour log-probs of their copies.
  const executedB = ep.candidates!.find((c) => c.step === 1 && c.agent === 'b' && c.branch!.executed)!;
  assert.deepEqual(ep.actions[3]!.actionTokens, executedB.actionTokens);
  assert.deepEqual(ep.actions[3]!.behaviourLogprobs, executedB.behaviourLogprobs);
  // Turn 1's copies start from the executed turn 0 (2 then 6); b sees its own copy's a.
  assert.match(tok.decode(executedB.promptTokens), /t1 b sees 2 after 2,6/);
  assert.deepEqual(ep.candidates!.filter((c) => c.step === 1 && c.agent === 'b').map((c) => /sees (\d)/.exec(tok.decode(c.promptTokens))![1]), ['1', '3', '2']);
  assert.deepEqual(bestCandidate([12, 14, 16]), 2);
  assert.deepEqual(bestCandidate([7, 10, 10]), 1, 'the first on ties');
});

test('the ranking is the caller’s: a score that prefers low numbers executes copy 0', async () => {
  const { episodes } = await play(['p0'], ({ teamReward }) => -teamReward);
  assert.deepEqual(episodes[0]!.actions.map((a) => a.text), ['1', '5', '1', '5']);
});

test('groups are keyed (problem, turn, agent) across problems, turns and agents, with GRPO advantages inside each', async () => {
  const { episodes } = await play(['p0', 'p1', 'p0']);
  // Problem p0 drawn twice is two trees, hence two groups.
  tagGroups(episodes, [0, 1, 2]);
  const config = parseConfig({ algorithm: 'at-grpo', rollout: { rolloutsPerPrompt: K } });
  const plan = ALGORITHM_REGISTRY['at-grpo'].plan(['a', 'b'], config);
  assert.equal(plan.sampling, 'tree');
  const actions = flattenEpisodes(episodes, plan, config);
  assert.equal(actions.length, 3 * 2 * 2 * K, 'every candidate of every tree, turn and agent is trained on');
  const groups = new Map<string, number[]>();
  for (const a of actions) groups.set(responseGroupKey(a), [...(groups.get(responseGroupKey(a)) ?? []), a.reward]);
  assert.deepEqual([...groups.keys()].map((k) => JSON.parse(k)), [0, 1, 2].flatMap((p) => [0, 1].flatMap((t) => ['a', 'b'].map((ag) => [`problem-${p}`, ag, t]))));
  // A candidate's reward: α·(its copy's team) + w·(its own local): a (6 + 1, 7 + 3, 8 + 2), b (6 + 5, 7 + 4, 8 + 6).
  for (const [key, rewards] of groups) assert.deepEqual(rewards, JSON.parse(key)[1] === 'a' ? [7, 10, 10] : [11, 11, 14], key);
  // a's group [7, 10, 10]: mean 9, population std √2: advantages (−2, 1, 1)/(√2 + 1e-6).
  const adv = groupRelativeAdvantages([7, 10, 10], ['g', 'g', 'g'], { scaleByStd: true });
  const s = Math.SQRT2 + 1e-6;
  [-2 / s, 1 / s, 1 / s].forEach((x, i) => assert.ok(Math.abs(adv[i]! - x) < 1e-9, `${adv[i]} vs ${x}`));
});

test('the zero-range filter finds exactly the groups whose rewards are all equal', () => {
  const act = (group: string, t: number, agent: string, reward: number) => ({ group, t, agent, reward, episode: 0 }) as Parameters<typeof responseGroupKey>[0];
  const actions = [
    act('problem-0', 0, 'a', 1), act('problem-0', 0, 'a', 1), act('problem-0', 0, 'a', 1), // flat
    act('problem-0', 0, 'b', 1), act('problem-0', 0, 'b', 0), act('problem-0', 0, 'b', 1), // not flat
    act('problem-1', 0, 'a', 0), act('problem-1', 0, 'a', 0), // flat (another problem)
    act('problem-0', 1, 'a', 0.5), act('problem-0', 1, 'a', 0.25), // not flat (another turn)
  ];
  const flat = flatGroups(actions, responseGroupKey);
  assert.deepEqual([flat.flat, flat.groups], [2, 4]);
  assert.deepEqual(actions.map((a) => flat.actions.has(a)), [true, true, true, false, false, false, true, true, false, false]);
});

test('tree sampling needs an environment that can be copied, and K ≥ 1', async () => {
  const env = new SumEnv('p', 'q');
  (env as { clone?: unknown }).clone = undefined;
  const sampler = new ScriptedSampler(tok, () => '1');
  await assert.rejects(treeRollout(workflow, [env], { sampler, tokenizer: tok, params: PARAMS, branches: 2, score: DEFAULT_SCORE }), /cannot be copied/);
  await assert.rejects(treeRollout(workflow, [new SumEnv('p', 'q')], { sampler, tokenizer: tok, params: PARAMS, branches: 0, score: DEFAULT_SCORE }), /branches must be a positive integer/);
});
