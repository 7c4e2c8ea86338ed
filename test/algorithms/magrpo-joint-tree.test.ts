// MAGRPO's tree of joint samples (src/workflow/joint-tree-sampling.ts) with hand-computed numbers:
// two agents acting in sequence (a then b) over two turns, a copyable environment whose rewards
// are the numbers the agents write, G = 2 joint samples per node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import type { Engine } from '../../src/engine/types.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { tagGroups } from '../../src/train/episode-groups.ts';
import type { RolloutRequest, Sampling, Task } from '../../src/train/task.ts';
import { assignCredit, flattenEpisodes } from '../../src/train/batch.ts';
import { turnScore } from '../../src/train/rewards.ts';
import { train } from '../../src/run/train.ts';
import { planFor } from '../../src/algorithms/check.ts';
import { createWorkflowTask, taskCharTokenizer } from '../../src/tasks/index.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { jointTreeRollout, type JointContinuation } from '../../src/workflow/joint-tree-sampling.ts';
import { ScriptedSampler } from '../../src/workflow/index.ts';
import { PARAMS } from '../workflow/fake-env.ts';
import { SumEnv, sumWorkflow } from '../workflow/sum-env.ts';

const tok = new CharTokenizer();

const workflow = sumWorkflow;
const G = 2;

// Joint sample j of a node (row j of its copies): at turn 0 a writes [1, 3][j] and b writes 2; at
// turn 1 a writes (its turn-0 number) + j and b writes 0. With team and local weights 1 (the defaults) the turn's
// joint reward is team + a's local + b's local = 2·(a + b): turn 0: [6, 10]; turn 1 after a wrote
// x: [2x, 2x + 2].
function script(r: { promptText: string; row: number; meta?: { agent: string; t: number } }): string {
  const j = r.row % G;
  if (r.meta!.t === 0) return r.meta!.agent === 'a' ? String([1, 3][j]) : '2';
  const before = Number(/after (\d+)/.exec(r.promptText)![1]);
  return r.meta!.agent === 'a' ? String(before + j) : '0';
}

async function play(continuation: JointContinuation, problems = ['p0']) {
  const sampler = new ScriptedSampler(tok, script);
  const envs = problems.map((p) => new SumEnv(p, `problem ${p}`));
  const episodes = await jointTreeRollout(workflow, envs, { sampler, tokenizer: tok, params: PARAMS, score: turnScore(parseConfig({}).reward), criticView: false, branches: G, continuation });
  return { episodes: tagGroups(episodes, problems.map((_, i) => i)), envs };
}

function magrpo(continuation: JointContinuation) {
  const config = parseConfig({ algorithm: 'magrpo', advantage: { gamma: 0.5 }, rollout: { rolloutsPerPrompt: G, jointTree: continuation } });
  const plan = ALGORITHM_REGISTRY.magrpo.plan(['a', 'b'], config, { agents: ['a', 'b'], jointTreeSampling: true } as unknown as Task);
  assert.equal(plan.jointTree, continuation);
  return { config, plan };
}

/** [node, sample, agent, text, credited reward, advantage, return] of every trained action. */
async function credited(continuation: JointContinuation) {
  const { episodes, envs } = await play(continuation);
  const { config, plan } = magrpo(continuation);
  const actions = flattenEpisodes(episodes, plan, config);
  assignCredit(actions, episodes, plan, config);
  return { rows: actions.map((a) => [a.joint!.node, a.joint!.sample, a.agent, a.text, a.reward, a.advantages_K[0], a.returns_K[0]]), episodes, envs, actions };
}

test('all: every joint sample grows its own node; groups are the G joint samples of a node; R = r + γ·mean(child returns), A = R − node mean', async () => {
  const { rows, episodes, actions } = await credited('all');
  // Root: r = [6, 10]. Node '0' (a wrote 1): r = [2, 4], mean 3. Node '1' (a wrote 3): r = [6, 8], mean 7.
  // Root returns (γ = 0.5): 6 + 0.5·3 = 7.5 and 10 + 0.5·7 = 13.5, mean 10.5: A = ∓3. Leaves: A = ∓1.
  // Step-end placement: b (the turn's last action) carries the team credit a + b, each its own local.
  assert.deepEqual(rows, [
    ['', 0, 'a', '1', 1, -3, 7.5], ['', 0, 'b', '2', 2 + 3, -3, 7.5],
    ['', 1, 'a', '3', 3, 3, 13.5], ['', 1, 'b', '2', 2 + 5, 3, 13.5],
    ['0', 0, 'a', '1', 1, -1, 2], ['0', 0, 'b', '0', 0 + 1, -1, 2],
    ['0', 1, 'a', '2', 2, 1, 4], ['0', 1, 'b', '0', 0 + 2, 1, 4],
    ['1', 0, 'a', '3', 3, -1, 6], ['1', 0, 'b', '0', 0 + 3, -1, 6],
    ['1', 1, 'a', '4', 4, 1, 8], ['1', 1, 'b', '0', 0 + 4, 1, 8],
  ]);
  // Each child node's joint samples saw their parent joint sample's turn (its copies started from that copy).
  const prompts = (node: string) => [...new Set(episodes[0]!.candidates!.filter((c) => c.joint!.node === node && c.agent === 'a').map((c) => tok.decode(c.promptTokens)))];
  assert.deepEqual(prompts('0').map((p) => /after ([\d,]*)/.exec(p)![1]), ['1,2']);
  assert.deepEqual(prompts('1').map((p) => /after ([\d,]*)/.exec(p)![1]), ['3,2']);
  assert.ok(actions.every((a) => a.group === 'problem-0'));
  // Episode.actions: the path of the best joint sample of every node (root 1, then node '1' sample 1).
  assert.deepEqual(episodes[0]!.actions.map((a) => [a.step, a.agent, a.text]), [[0, 'a', '3'], [0, 'b', '2'], [1, 'a', '4'], [1, 'b', '0']]);
  assert.deepEqual(episodes[0]!.candidates!.filter((c) => c.branch!.executed).map((c) => [c.joint!.node, c.joint!.sample, c.agent]), [['', 1, 'a'], ['', 1, 'b'], ['1', 1, 'a'], ['1', 1, 'b']]);
  assert.deepEqual(episodes[0]!.candidates!.map((c) => c.joint!.child), ['0', '0', '1', '1', null, null, null, null, null, null, null, null]);
});

test('best: only the best joint sample continues, and its node is every sibling’s continuation', async () => {
  const { rows, episodes, envs } = await credited('best');
  // Root r = [6, 10]: sample 1 continues. Node '1': r = [6, 8], mean 7. Root returns 6 + 0.5·7 = 9.5 and
  // 10 + 0.5·7 = 13.5: the common future cancels, A = r − mean r = ∓2.
  assert.deepEqual(rows, [
    ['', 0, 'a', '1', 1, -2, 9.5], ['', 0, 'b', '2', 5, -2, 9.5],
    ['', 1, 'a', '3', 3, 2, 13.5], ['', 1, 'b', '2', 7, 2, 13.5],
    ['1', 0, 'a', '3', 3, -1, 6], ['1', 0, 'b', '0', 3, -1, 6],
    ['1', 1, 'a', '4', 4, 1, 8], ['1', 1, 'b', '0', 4, 1, 8],
  ]);
  assert.deepEqual(episodes[0]!.candidates!.map((c) => c.joint!.child), ['1', '1', '1', '1', null, null, null, null]);
  assert.deepEqual(episodes[0]!.actions.map((a) => a.text), ['3', '2', '4', '0']);
  assert.deepEqual(episodes[0]!.steps.map((s) => [s.t, s.teamReward, s.done]), [[0, 5, false], [1, 4, true]]);
  // The environment passed in is the root's: the copies played the turns, it saw none.
  assert.deepEqual(envs[0]!.seen, []);
  // Two problems: two trees, one group each.
  const two = await play('best', ['p0', 'p1']);
  assert.deepEqual(two.episodes.map((e) => [e.group, e.candidates!.length]), [['problem-0', 8], ['problem-1', 8]]);
});

test('the trainer asks for the tree when rollout.jointTree says so and the task offers it; independent episodes by default', async () => {
  const asked = async (extra: Record<string, unknown>, offers: boolean): Promise<RolloutRequest> => {
    let request: RolloutRequest | undefined;
    class Asked extends Error {}
    const task: Task = {
      agents: ['a', 'b'], ...(offers ? { jointTreeSampling: true } : {}),
      rollout: async (_e, req) => {
        request = req;
        throw new Asked();
      },
      evaluate: async () => [],
    };
    const config = parseConfig({ algorithm: 'magrpo', model: { engine: 'tabular' }, rollout: { batchSize: 1, rolloutsPerPrompt: 3, ...extra }, train: { steps: 1 } });
    await assert.rejects(train({ config, engine: new TabularEngine(8), task, runDir: mkdtempSync(join(tmpdir(), 'marft-jt-')), progress: false }), Asked);
    return request!;
  };
  const best = await asked({ jointTree: 'best' }, true);
  assert.deepEqual(best.jointTree, { branches: 3, continuation: 'best' });
  // With its ranking of a turn's copies from the run's reward settings (α·team + w·Σ local; the task places no reward).
  assert.equal(best.turnScore!({ teamReward: 2, actions: [{ localReward: 0.5 }, {}] as never }), 2.5);
  assert.equal((await asked({}, true)).turnScore, undefined, 'only a tree is sent one');
  assert.deepEqual((await asked({ jointTree: 'all' }, true)).jointTree, { branches: 3, continuation: 'all' });
  assert.equal((await asked({ jointTree: 'independent' }, true)).jointTree, undefined);
  assert.equal((await asked({}, true)).jointTree, undefined, 'the default is independent episodes');
  assert.equal((await asked({ jointTree: 'best' }, false)).jointTree, undefined, 'a task that cannot copy its state samples independent episodes');
  // Another algorithm never asks for it.
  const grpo = planFor(parseConfig({ algorithm: 'grpo', rollout: { rolloutsPerPrompt: 3 } }), { agents: ['a'], jointTreeSampling: true, rollout: async () => [], evaluate: async () => [] });
  assert.equal(grpo.jointTree, undefined);
});

const wtok = taskCharTokenizer();
const SAMPLING: Sampling = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 200 };
const fakeEngine = { config: { vocabSize: wtok.vocabSize }, info: { vocabSize: wtok.vocabSize } } as unknown as Engine;

test('the workflow task: a multi-turn workflow answers with one tree per problem, a one-turn workflow with independent episodes', async () => {
  // SA+MT on GSM8K: the solver revises its answer over up to 4 turns (stopping when it repeats itself);
  // the scripted answer changes with the row, so turns go on.
  const multi = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-mt' }, { tokenizer: wtok, sampler: () => new ScriptedSampler(wtok, (r) => `The answer is \\boxed{${r.call * 10 + r.row}}.`) });
  const request: RolloutRequest = { step: 0, seed: 1, batchSize: 2, rolloutsPerPrompt: G, sampling: SAMPLING, policies: { reasoner: 'p' }, jointTree: { branches: G, continuation: 'best' }, turnScore: turnScore(parseConfig({}).reward) };
  const trees = await multi.rollout(fakeEngine, request);
  assert.equal(trees.length, 2);
  for (const [i, tree] of trees.entries()) {
    assert.equal(tree.group, `problem-${i}`);
    const nodes = new Map<string, number[]>();
    for (const c of tree.candidates!) nodes.set(c.joint!.node, [...(nodes.get(c.joint!.node) ?? []), c.joint!.sample]);
    // best: one node per turn played, each with G joint samples (one action each: one agent).
    assert.deepEqual([...nodes.values()], [...nodes.keys()].map(() => [0, 1]));
    assert.equal(nodes.size, tree.steps.length);
    assert.ok(nodes.size > 1, 'more than one turn played');
  }
  const single = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-st' }, { tokenizer: wtok, sampler: () => new ScriptedSampler(wtok, () => 'The answer is \\boxed{1}.') });
  const episodes = await single.rollout(fakeEngine, { ...request, policies: { reasoner: 'p' } });
  assert.equal(episodes.length, 2 * G);
  assert.ok(episodes.every((e) => e.candidates === undefined));
});

test('MAGRPO trains on the tree of a multi-turn workflow through train() (tabular policy, SA+MT on GSM8K)', async () => {
  const task = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-mt', horizon: 2 }, { tokenizer: wtok });
  const config = parseConfig({ algorithm: 'magrpo', seed: 3, model: { engine: 'tabular' }, actor: { optim: { lr: 0.1 } }, rollout: { batchSize: 2, rolloutsPerPrompt: G, maxNewTokens: 3, jointTree: 'best' }, train: { steps: 2 } });
  const engine = new TabularEngine(wtok.vocabSize);
  const seen: number[] = [];
  const spy: Task = { agents: task.agents, jointTreeSampling: true, rollout: async (e, r) => {
    const eps = await task.rollout(e, r);
    seen.push(...eps.map((ep) => ep.candidates!.length));
    return eps;
  }, evaluate: (e, r) => task.evaluate(e, r) };
  const result = await train({ config, engine, task: spy, runDir: mkdtempSync(join(tmpdir(), 'marft-jt-train-')), progress: false });
  assert.equal(result.metrics.length, 2);
  // One tree per problem; with seed 3 no episode stops early (the self-consistency rule): 2 nodes × G joint samples of one action.
  assert.deepEqual(seen, [4, 4, 4, 4]);
  for (const m of result.metrics) {
    assert.ok(Number.isFinite(m.policy_loss as number) && Number.isFinite(m.grad_norm_actor as number));
    assert.equal(m.importance_weight_mean, 1);
  }
});
