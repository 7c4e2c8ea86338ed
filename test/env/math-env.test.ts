// The maths environment: team reward from the verifier (a benchmark's own scorer for benchmark
// problems), role-local rewards with the spec's weights, and the Reasoner / Tool-User consistency
// check (programs run in the sandbox).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MathEnv, roleRewardWeights } from '../../src/env/index.ts';
import { loadDataset, type MathProblem } from '../../src/env/datasets/index.ts';

const problem = (answer: string): MathProblem => ({ domain: 'math', id: 'p1', dataset: 'test', question: 'What is 7 divided by 9?', answer, meta: {} });
const py = (code: string): string => `Here is my program.\n\`\`\`python\n${code}\n\`\`\``;
const opts = { programTimeoutMs: 10_000 };

test('pipeline: the last agent\'s answer decides the 1/0 team reward; no local rewards, no feedback', async () => {
  const env = new MathEnv(problem('\\frac{7}{9}'), opts);
  assert.equal(env.firstMessage, 'What is 7 divided by 9?');
  const right = await env.onStep({ t: 0, outputs: [
    { agent: 'planner', role: 'Planner', text: 'Divide 7 by 9; the answer is 3.' },
    { agent: 'solver', role: 'Solver', text: 'So the value is $\\boxed{\\dfrac{7}{9}}$.' },
  ] });
  assert.deepEqual(right, { teamReward: 1, done: false });
  const wrong = await env.onStep({ t: 1, outputs: [
    { agent: 'solver', role: 'Solver', text: '\\boxed{7/9}' },
    { agent: 'verifier', role: 'Verifier', text: 'I correct it: \\boxed{0.7}' },
  ] });
  assert.deepEqual(wrong, { teamReward: 0, done: false });
  assert.deepEqual(env.finalScore().score, 0);
  assert.equal(env.finalScore().info['steps'], 2);
  // answerRole: the Solver's answer is the team's.
  const bySolver = new MathEnv(problem('\\frac{7}{9}'), { ...opts, answerRole: 'Solver' });
  assert.equal((await bySolver.onStep({ t: 0, outputs: [
    { agent: 'solver', role: 'Solver', text: '\\boxed{7/9}' },
    { agent: 'verifier', role: 'Verifier', text: '\\boxed{0.7}' },
  ] })).teamReward, 1);
});

test('Reasoner and Tool-User agree: episode ends, both local rewards are 1.0', async () => {
  const env = new MathEnv(problem('\\frac{1}{2}'), opts);
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'reasoner', role: 'Reasoner', text: 'Half of one.\n#### 1/2' },
    { agent: 'tool_user', role: 'Tool-User', text: py('print(1/2)') },
  ] });
  assert.equal(out.teamReward, 1);
  assert.equal(out.done, true);
  assert.deepEqual(out.perAgentReward, { reasoner: 1, tool_user: 1 });
  assert.equal(out.feedback, 'reasoner (Reasoner) answered 1/2\ntool_user (Tool-User): the program printed 0.5\nThe answers agree.');
});

test('disagreement is reported without the reference; local rewards 0.2 + 0 and 0.1 + 0.1 + 0', async () => {
  const env = new MathEnv(problem('\\frac{7}{9}'), opts);
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'reasoner', role: 'Reasoner', text: 'I think\n#### 3' },
    { agent: 'tool_user', role: 'Tool-User', text: py('x = 1\nprint("debug")\nprint(x / 2)') },
  ] });
  assert.equal(out.teamReward, 0);
  assert.equal(out.done, false);
  assert.deepEqual(out.perAgentReward, { reasoner: 0.2, tool_user: 0.2 });
  assert.equal(out.feedback, 'reasoner (Reasoner) answered 3\ntool_user (Tool-User): the program printed 0.5\nThe answers do not agree.');
  assert.ok(!/7\}\{9\}|0\.77/.test(out.feedback!));
});

test('a failing program: its error text is the feedback; Tool-User reward 0; Reasoner without #### gets 0.8', async () => {
  const env = new MathEnv(problem('\\frac{7}{9}'), opts);
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'reasoner', role: 'Reasoner', text: 'The answer is $\\boxed{\\frac{7}{9}}$.' },
    { agent: 'tool_user', role: 'Tool-User', text: py('print(7 / 0)') },
  ] });
  assert.equal(out.done, false);
  assert.equal(out.teamReward, 0);
  assert.deepEqual(out.perAgentReward, { reasoner: 0.8, tool_user: 0 });
  assert.match(out.feedback!, /^reasoner \(Reasoner\) answered \\frac\{7\}\{9\}\ntool_user \(Tool-User\): the program failed \(runtime_error\):\n[\s\S]*ZeroDivisionError[\s\S]*\nThe answers do not agree\.$/);
  const none = await env.onStep({ t: 1, outputs: [{ agent: 'tool_user', role: 'Tool-User', text: 'I forgot the code' }] });
  assert.equal(none.feedback, 'tool_user (Tool-User) gave no program in a ```python block.\nThe answers do not agree.');
  assert.deepEqual(none.perAgentReward, { tool_user: 0 });
});

test('answerRole and configurable weights; n agents per role must all agree', async () => {
  const weights = roleRewardWeights({ reasoner: { format: 0.5, correct: 0.5 } });
  const env = new MathEnv(problem('12'), { ...opts, rewardWeights: weights, answerRole: 'Reasoner' });
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'reasoner_1', role: 'Reasoner', text: '#### 12' },
    { agent: 'reasoner_2', role: 'Reasoner', text: '#### 13' },
    { agent: 'tool_user_1', role: 'Tool-User', text: py('print(3 * 4)') },
    { agent: 'tool_user_2', role: 'Tool-User', text: py('print(12)') },
  ] });
  // The team answer is reasoner_2's (the last Reasoner): wrong.
  assert.equal(out.teamReward, 0);
  assert.equal(out.done, false);
  assert.deepEqual(out.perAgentReward, { reasoner_1: 1, reasoner_2: 0.5, tool_user_1: 1, tool_user_2: 1 });
});

test('sameAnswer compares the stated answers mathematically', () => {
  const env = new MathEnv(problem('1'), opts);
  assert.equal(env.sameAnswer!('so #### 0.5', 'thus \\boxed{\\frac12}'), true);
  assert.equal(env.sameAnswer!('#### 0.5', '#### 0.6'), false);
  assert.equal(env.sameAnswer!('no answer', 'no answer'), false);
});

test("held-out benchmarks are judged by their own scorer (problem.benchmark from the loaders); options.benchmark overrides; training sets keep marft's comparison", async () => {
  const math500 = (loadDataset('math500').problems as MathProblem[]).find((p) => p.answer === '\\frac{14}{3}')!;
  assert.equal(math500.benchmark, 'math500');
  const say = async (env: MathEnv, text: string): Promise<number> => (await env.onStep({ t: 0, outputs: [{ agent: 'solver', role: 'Solver', text }] })).teamReward;
  // PRM800K's grader refuses an unreduced fraction; marft's comparison accepts it.
  assert.equal(await say(new MathEnv(math500, opts), 'So $\\boxed{\\frac{28}{6}}$.'), 0);
  assert.equal(await say(new MathEnv(math500, opts), 'So $\\boxed{\\frac{14}{3}}$.'), 1);
  assert.equal(await say(new MathEnv(math500, { ...opts, benchmark: null }), 'So $\\boxed{\\frac{28}{6}}$.'), 1, 'null: marft\'s comparison');
  const env = new MathEnv(math500, opts);
  await say(env, '#### 14/3');
  assert.equal(env.finalScore().info['scorer'], 'math500');
  assert.equal(env.finalScore().score, 1, 'the answer is read by the workflow format (####), judged by the benchmark');
  // OlympiadBench: the problem's per-problem tolerance (meta.error) is applied.
  const ob = (loadDataset('olympiadbench').problems as MathProblem[]).find((p) => p.id === 'olympiadbench/2592')!;
  assert.equal(await say(new MathEnv(ob, opts), 'So the final answer is \\boxed{4.28}'), 1);
  assert.equal(await say(new MathEnv(problem('4.2'), opts), 'So the final answer is \\boxed{4.28}'), 0, 'no benchmark: marft\'s tolerance');
  // gsm8k-train (a training set) has no benchmark; gsm8k (the test set) has GSM8K's.
  assert.equal((loadDataset('gsm8k-train').problems[0] as MathProblem).benchmark, undefined);
  const gsm = loadDataset('gsm8k').problems[0] as MathProblem;
  assert.equal(gsm.benchmark, 'gsm8k');
  assert.equal(await say(new MathEnv(gsm, opts), `so ${gsm.answer}.0001 dollars`), 0, 'exact numbers');
  assert.equal(await say(new MathEnv(problem('7'), { ...opts, benchmark: 'gsm8k' }), 'It is 7.'), 1);
  assert.throws(() => new MathEnv(problem('7'), { benchmark: 'gsm9k' }), /unknown benchmark "gsm9k" \(known: /);
});
