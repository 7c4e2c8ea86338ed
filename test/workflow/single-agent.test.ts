// SA+ST and SA+MT (self-consistency stop) with a scripted policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, extractHashAnswer, rollout, singleAgentMultiTurn, singleAgentSingleTurn } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

test('SA+ST: one Reasoner response, one step', async () => {
  const wf = singleAgentSingleTurn({ domain: 'math' });
  assert.deepEqual([wf.name, wf.horizon, wf.agents.map((a) => `${a.name}/${a.role}/${a.policy}`)], ['sa-st-math', 1, ['reasoner/Reasoner/solo']]);
  const sampler = new ScriptedSampler(tok, () => 'so 2+2 = 4\n#### 4');
  const [ep] = await rollout(wf, [new FakeEnv('p', 'What is 2+2?')], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.steps, [{ t: 0, teamReward: 0, done: true }]);
  assert.equal(ep!.actions[0]!.text, 'so 2+2 = 4\n#### 4');
});

test('SA+MT: stops when two consecutive answers agree under env.sameAnswer', async () => {
  const wf = singleAgentMultiTurn({ domain: 'math' });
  assert.equal(wf.horizon, 4);
  // Answers per turn: 5, 4, (different words) 4 → stops after turn 2.
  const replies = ['I think 5.\n#### 5', 'Recheck: 4.\n#### 4', 'Yes, four.\n#### 4', 'never'];
  const sampler = new ScriptedSampler(tok, (r) => replies[r.meta!.t]!);
  const env = new FakeEnv('p', 'What is 2+2?', undefined, (a, b) => extractHashAnswer(a) === extractHashAnswer(b));
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.steps.map((s) => s.done), [false, false, true]);
  assert.deepEqual(ep!.actions.map((a) => a.text), replies.slice(0, 3));
  const turn1 = tok.decode(ep!.actions[1]!.promptTokens);
  assert.ok(turn1.includes('Your solution from the previous turn:\nI think 5.\n#### 5'));
  assert.ok(!turn1.includes("environment's check")); // no feedback given, none shown
});

test('SA+MT without sameAnswer compares trimmed text, and stops at T otherwise', async () => {
  const wf = singleAgentMultiTurn({ domain: 'code', horizon: 3 });
  assert.equal(wf.agents[0]!.role, 'Coder');
  const same = new ScriptedSampler(tok, (r) => (r.meta!.t === 0 ? 'print(1)' : 'print(1)\n'));
  const [a] = await rollout(wf, [new FakeEnv('a', 'p')], { sampler: same, tokenizer: tok, params: PARAMS });
  assert.equal(a!.steps.length, 2);
  const differ = new ScriptedSampler(tok, (r) => `print(${r.meta!.t})`);
  const [b] = await rollout(wf, [new FakeEnv('b', 'p')], { sampler: differ, tokenizer: tok, params: PARAMS });
  assert.deepEqual(b!.steps.map((s) => s.done), [false, false, true]);
});
