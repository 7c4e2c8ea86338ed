// Tree sampling (src/workflow/tree-sampling.ts), AT-GRPO's sampler, with hand-computed numbers:
// a two-agent sequential workflow (a then b) over two turns, a copyable environment whose rewards
// are the numbers the agents write, and a script whose K = 3 candidates per agent are fixed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { bestCandidate, ScriptedSampler, treeRollout } from '../../src/workflow/index.ts';
import { tagGroups } from '../../src/train/episode-groups.ts';
import { responseGroupKey } from '../../src/train/credit/group-relative.ts';
import { groupRelativeAdvantages } from '../../src/core/statistics.ts';
import { flattenEpisodes } from '../../src/train/batch.ts';
import { flatGroups } from '../../src/train/credit/flat-groups.ts';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import { PARAMS } from './fake-env.ts';
import { SumEnv, sumWorkflow } from './sum-env.ts';

const tok = new CharTokenizer();

const workflow = sumWorkflow;

// Candidate k of agent a writes A[k], of agent b B[k] (the K copies of a tree are rows k of a call, tree-major).
const A = [1, 3, 2];
const B = [5, 4, 6];
const K = 3;

async function play(problems: string[]) {
  const sampler = new ScriptedSampler(tok, (r) => String((r.meta!.agent === 'a' ? A : B)[r.row % K]));
  const envs = problems.map((p) => new SumEnv(p, `problem ${p}`));
  const episodes = await treeRollout(workflow, envs, { sampler, tokenizer: tok, params: PARAMS, reward: { teamWeight: 1, localWeight: 1 }, criticView: false, branches: K });
  return { episodes, envs, sampler };
}

test('the best-reward candidate is the one executed; every candidate is kept with its own reward', async () => {
  const { episodes, envs } = await play(['p0']);
  const ep = episodes[0]!;
  // Agent a's candidate k is scored through its step, b continuing in the copy with B[k]:
  // α·team + local = (A[k] + B[k]) + A[k] = [7, 10, 10]: the first of the tied best, k = 1, is executed.
  // Agent b then acts after a wrote 3: (3 + B[k]) + B[k] = [13, 11, 15]: k = 2 is executed.
  const turn = (t: number) => ep.candidates!.filter((c) => c.step === t).map((c) => [c.agent, c.text, c.reward, c.branch!.k, c.branch!.executed]);
  for (const t of [0, 1]) {
    assert.deepEqual(turn(t), [
      ['a', '1', 7, 0, false], ['a', '3', 10, 1, true], ['a', '2', 10, 2, false],
      ['b', '5', 13, 0, false], ['b', '4', 11, 1, false], ['b', '6', 15, 2, true],
    ]);
  }
  // The executed path: a wrote 3 and b 6 at both turns; the real environment saw exactly that.
  assert.deepEqual(ep.actions.map((a) => [a.step, a.agent, a.text, a.reward]), [[0, 'a', '3', 12], [0, 'b', '6', 15], [1, 'a', '3', 12], [1, 'b', '6', 15]]);
  assert.deepEqual(envs[0]!.seen, [['3', '6'], ['3', '6']]);
  assert.deepEqual(ep.steps.map((s) => [s.t, s.teamReward, s.done]), [[0, 9, false], [1, 9, true]]);
  // The executed candidates carry the sampled tokens and behaviour log-probs of their copies.
  const executedB = ep.candidates!.find((c) => c.step === 1 && c.agent === 'b' && c.branch!.executed)!;
  assert.deepEqual(ep.actions[3]!.actionTokens, executedB.actionTokens);
  assert.deepEqual(ep.actions[3]!.behaviourLogprobs, executedB.behaviourLogprobs);
  // b's candidates at turn 1 saw the executed history (3 then 6 at turn 0) and a's executed 3.
  assert.match(tok.decode(executedB.promptTokens), /t1 b sees 3 after 3,6/);
  assert.deepEqual(bestCandidate([7, 10, 10]), 1);
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
  for (const [key, rewards] of groups) assert.deepEqual(rewards, JSON.parse(key)[1] === 'a' ? [7, 10, 10] : [13, 11, 15], key);
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
  await assert.rejects(treeRollout(workflow, [env], { sampler, tokenizer: tok, params: PARAMS, branches: 2 }), /cannot be copied/);
  await assert.rejects(treeRollout(workflow, [new SumEnv('p', 'q')], { sampler, tokenizer: tok, params: PARAMS, branches: 0 }), /branches must be a positive integer/);
});
