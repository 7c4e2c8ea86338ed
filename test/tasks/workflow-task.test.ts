// The "workflow" task on real benchmark data with a scripted policy: GSM8K Duo rewards agree with
// the maths verifier on the sampled text, problem selection depends on (seed, step) only and never
// touches held-out problems, and an MBPP Duo scores a correct program 1 and wrong ones 0 through
// the sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkflowTask, WorkflowTask } from '../../src/tasks/index.ts';
import { taskFactory } from '../../src/run/task-registry.ts';
import { MathEnv } from '../../src/env/index.ts';
import type { CodeProblem, MathProblem, Problem } from '../../src/env/datasets/index.ts';
import { mathAnswersEqual } from '../../src/verify/math/index.ts';
import { taskCharTokenizer } from '../../src/tasks/index.ts';
import { ScriptedSampler, type Script } from '../../src/workflow/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import type { RolloutRequest, Sampling } from '../../src/train/task.ts';

const tok = taskCharTokenizer();
const SAMPLING: Sampling = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4000 };
/** The scripted sampler never touches the engine; play() only reads its vocabulary size. */
const fakeEngine = { config: { vocabSize: tok.vocabSize }, info: { vocabSize: tok.vocabSize } } as unknown as Engine;

function scripted(script: (p: Problem, agent: string, episode: number) => string, task: () => WorkflowTask): { sampler: ScriptedSampler; deps: { tokenizer: typeof tok; sampler: () => ScriptedSampler } } {
  const byId = (): Map<string, Problem> => new Map([...task().problems.train, ...task().problems.heldOut].map((p) => [p.id, p]));
  let index: Map<string, Problem> | undefined;
  const s: Script = (input) => {
    index ??= byId();
    const p = index.get(input.meta!.problemId)!;
    return script(p, input.meta!.agent, input.meta!.episode);
  };
  const sampler = new ScriptedSampler(tok, s);
  return { sampler, deps: { tokenizer: tok, sampler: () => sampler } };
}

function request(step: number, seed: number, batchSize: number, rolloutsPerPrompt = 1, policies: Record<string, string> = { planner: 'policy', solver: 'policy' }): RolloutRequest {
  return { step, seed, batchSize, rolloutsPerPrompt, sampling: SAMPLING, policies };
}

test('GSM8K Duo: the team reward of every episode is the verifier on the Solver\'s sampled text', async () => {
  let task!: WorkflowTask;
  // Even episodes answer the reference (in a sentence, boxed), odd ones the reference + 1.
  const { deps } = scripted((p, agent, episode) => {
    const ref = (p as MathProblem).answer;
    if (agent === 'planner') return '1. Read the numbers. 2. Combine them.';
    return episode % 2 === 0 ? `Following the plan, the result is \\boxed{${ref}}.` : `So the total is \\boxed{${Number(ref.replace(/,/g, '')) + 1}}.`;
  }, () => task);
  task = createWorkflowTask({ dataset: 'gsm8k', workflow: 'duo' }, deps);
  assert.deepEqual(task.agents, ['planner', 'solver']);
  const episodes = await task.rollout(fakeEngine, request(3, 11, 6, 2, { planner: 'planner-lora', solver: 'solver-lora' }));
  assert.equal(episodes.length, 12);
  let correct = 0;
  for (const [k, ep] of episodes.entries()) {
    const problem = task.problems.train.find((p) => p.id === ep.problemId) as MathProblem;
    assert.ok(problem, `${ep.problemId} is a training problem`);
    assert.equal(ep.problemId, episodes[k - (k % 2)]!.problemId, 'rolloutsPerPrompt copies are adjacent');
    const [planner, solver] = ep.actions;
    assert.equal(planner!.policy, 'planner-lora');
    assert.equal(solver!.policy, 'solver-lora');
    assert.equal(tok.decode(solver!.actionTokens.slice(0, -1)), solver!.text, 'exact sampled tokens kept');
    const extracted = MathEnv.textAnswer(solver!.text);
    const verdict = extracted !== null && mathAnswersEqual(problem.answer, extracted) ? 1 : 0;
    assert.equal(verdict, k % 2 === 0 ? 1 : 0);
    assert.equal(ep.steps[0]!.teamReward, verdict);
    assert.equal(ep.outcome, verdict);
    assert.deepEqual(ep.actions.map((a) => a.localReward), [0, 0], 'the Duo gives no role-local reward (the trainer places the team reward)');
    correct += verdict;
  }
  assert.equal(correct, 6);
});

test('problem selection depends on (seed, step) only; held-out problems never appear in training steps', async () => {
  let task!: WorkflowTask;
  const { deps } = scripted(() => 'x', () => task);
  task = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-st', heldOutFraction: 0.2, splitSeed: 5 }, deps);
  const other = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-st', heldOutFraction: 0.2, splitSeed: 5 }, { ...deps });
  const total = task.problems.train.length + task.problems.heldOut.length;
  assert.equal(total, 1319);
  assert.ok(Math.abs(task.problems.heldOut.length / total - 0.2) < 0.03, `held-out fraction ${task.problems.heldOut.length / total}`);
  assert.deepEqual(other.problems.heldOut.map((p) => p.id), task.problems.heldOut.map((p) => p.id), 'the split is deterministic');

  const ids = async (t: WorkflowTask, step: number, seed: number) => (await t.rollout(fakeEngine, request(step, seed, 16, 1, { reasoner: 'solo' }))).map((e) => e.problemId);
  const a = await ids(task, 4, 99);
  assert.deepEqual(await ids(other, 4, 99), a, 'same (seed, step): same problems, in a fresh task');
  assert.equal(new Set(a).size, 16, 'no repeats inside a step');
  assert.notDeepEqual(await ids(task, 5, 99), a, 'another step: other problems');
  assert.notDeepEqual(await ids(task, 4, 100), a, 'another seed: other problems');

  const heldOut = new Set(task.problems.heldOut.map((p) => p.id));
  const seen = new Set<string>();
  for (let step = 0; step < 40; step++) for (const id of await ids(task, step, 1000 + step)) seen.add(id);
  assert.ok(seen.size > 400, `40 steps of 16 cover ${seen.size} problems`);
  for (const id of seen) assert.ok(!heldOut.has(id), `held-out ${id} drawn in training`);

  const evaluated = await task.evaluate(fakeEngine, { seed: 1, sampling: SAMPLING, problems: 5, policies: { reasoner: 'base' } });
  assert.deepEqual(evaluated.map((e) => e.problemId), task.problems.heldOut.slice(0, 5).map((p) => p.id));
  assert.ok(evaluated.every((e) => e.actions[0]!.policy === 'base'));
});

test('a separate held-out dataset: training problems with the same text are dropped', () => {
  const task = createWorkflowTask({ dataset: 'gsm8k-train', heldOutDataset: 'gsm8k', workflow: 'sa-st' }, { tokenizer: tok });
  assert.equal(task.problems.heldOut.length, 1319);
  assert.equal(task.problems.train.length + task.problems.dropped, 7473);
  const texts = new Set(task.problems.heldOut.map((p) => (p as MathProblem).question));
  assert.ok(task.problems.train.every((p) => !texts.has((p as MathProblem).question)));
  // The socratic test set asks exactly GSM8K test's questions: nothing is left to train on.
  assert.throws(() => createWorkflowTask({ dataset: 'gsm8k-socratic', heldOutDataset: 'gsm8k' }, { tokenizer: tok }), /task\.options: no training problems left/);
});

test('a file in a published layout: malformed lines are reported with their line numbers, the rest splits', () => {
  const task = createWorkflowTask({ dataset: 'deepscaler', file: 'test/fixtures/datasets/deepscaler.jsonl', heldOutFraction: 0.5, workflow: 'trio' }, { tokenizer: tok });
  assert.deepEqual(task.agents, ['planner', 'solver', 'verifier']);
  assert.equal(task.problems.train.length + task.problems.heldOut.length, 3);
  assert.ok(task.problems.train.length >= 1 && task.problems.heldOut.length >= 1);
  assert.deepEqual(task.problems.loadErrors.map((e) => e.line), [3, 4]);
  assert.match(task.problems.loadErrors[1]!.message, /missing field "answer"/);
});

test('MBPP Duo through the sandbox: the reference program scores 1, a wrong one and an early exit 0', { timeout: 120_000 }, async () => {
  let task!: WorkflowTask;
  const programs = (p: CodeProblem) => [p.referenceSolution!, 'def unrelated():\n    return None', 'import sys\nsys.exit(0)'];
  const { deps } = scripted((p, agent, episode) => {
    if (agent === 'planner') return 'Write the function the tests call.';
    return `Here is the solution:\n\`\`\`python\n${programs(p as CodeProblem)[episode % 3]}\n\`\`\``;
  }, () => task);
  task = createWorkflowTask({ dataset: 'mbpp', workflow: 'duo', heldOutFraction: 0.1, programTimeoutMs: 10_000 }, deps);
  const episodes = await task.rollout(fakeEngine, request(0, 3, 2, 3));
  assert.equal(episodes.length, 6);
  assert.deepEqual(episodes.map((e) => e.outcome), [1, 0, 0, 1, 0, 0]);
  assert.deepEqual(episodes.map((e) => e.steps[0]!.teamReward), [1, 0, 0, 1, 0, 0]);
  for (const e of episodes) assert.ok((e.info.total as number) >= 1, 'golden tests ran');
  assert.deepEqual(episodes[0]!.info.statuses, Array(episodes[0]!.info.total as number).fill('passed'));
});

test('options are validated with errors naming the key and the allowed values', () => {
  const registered = taskFactory('workflow');
  assert.ok(registered, "registered as 'workflow'");
  const factory = (options: Record<string, unknown>) => registered(options, { modelPath: '' });
  assert.throws(() => factory({ workflw: 'duo' }), /^TaskOptionError: task\.options\.workflw: unknown option of task 'workflow' \(known: dataset, /);
  assert.throws(() => factory({ workflow: 'penta' }), /task\.options\.workflow: got "penta", expected one of 'duo', 'trio', 'quad', 'duo-anon'/);
  assert.throws(() => factory({ dataset: 'gsm9k' }), /task\.options\.dataset: got "gsm9k", expected one of 'gsm8k', /);
  assert.throws(() => factory({ dataset: 'gsm8k', workflow: 'coder-tester' }), /task\.options\.workflow: 'coder-tester' needs a code dataset/);
  assert.throws(() => factory({ dataset: 'deepscaler' }), /task\.options\.dataset: dataset 'deepscaler' has no bundled copy; give the path .* as task\.options\.file/);
  assert.throws(() => factory({ heldOutFraction: 1.5 }), /task\.options\.heldOutFraction: got 1\.5, expected a number in \[0, 1\]/);
  // Pipelines take several agents per role (test/workflow/pipelines.test.ts checks who sees what).
  assert.deepEqual(createWorkflowTask({ dataset: 'gsm8k', workflow: 'duo', agentsPerRole: 2 }).agents, ['planner_1', 'planner_2', 'solver_1', 'solver_2']);
  assert.throws(() => factory({ workflow: 'sa-st', agentsPerRole: 2 }), /task\.options\.agentsPerRole: got 2, expected 1 for workflow 'sa-st' \(a single agent/);
  assert.throws(() => factory({ rewardWeights: { planner: { x: 1 } } }), /task\.options\.rewardWeights\.planner: unknown role \(known: reasoner, toolUser, coder, tester\)/);
  assert.throws(() => factory({ rewardWeights: { coder: { build: 1 } } }), /task\.options\.rewardWeights\.coder\.build: unknown option/);
  assert.throws(() => factory({ tokenizer: '/nonexistent/model' }), /task\.options\.tokenizer: "\/nonexistent\/model": /);
  // The reward settings moved to the configuration's reward section: each old key is refused in one line naming its new key.
  assert.throws(() => factory({ teamWeight: 1 }), /^TaskOptionError: task\.options\.teamWeight: moved to the configuration's reward section: set reward\.teamWeight$/);
  assert.throws(() => factory({ localWeight: 1 }), /^TaskOptionError: task\.options\.localWeight: moved to the configuration's reward section: set reward\.localWeight$/);
  assert.throws(() => factory({ teamReward: 'none' }), /^TaskOptionError: task\.options\.teamReward: moved to the configuration's reward section: set reward\.share \(broadcast or split; reward\.teamWeight: 0 leaves the team reward out\)$/);
});
