// Multi-turn pairs (Coder–Tester, Reasoner–Tool-User) and n agents per role, with a scripted policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, coderTester, reasonerToolUser, rollout, type StepInput } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();
const GOLDEN = 'GOLDEN-TESTS-3-of-5-passed';

/** Replies "<agent> v<t>" so every turn's output is distinct. */
const versionSampler = () => new ScriptedSampler(tok, (r) => `${r.meta!.agent} v${r.meta!.t}`);

/** Agrees at step `agreeAt`; the golden result stays in the environment (never in feedback). */
function codeEnv(id: string, agreeAt: number) {
  const env = new FakeEnv(id, `Read n, print n squared. (${id})`, (step: StepInput) => ({
    teamReward: 0.6,
    done: step.t === agreeAt,
    feedback: `On the Tester's input the program printed ${step.t}, expected ${step.t + 1}.`,
    perAgentReward: { coder: 0.1, tester: 0.2 },
  }));
  return Object.assign(env, { golden: GOLDEN });
}

test('Coder–Tester: both act each turn, feedback and counterpart outputs reach later turns, agreement ends the episode', async () => {
  const wf = coderTester();
  assert.deepEqual([wf.name, wf.horizon, wf.agents.map((a) => `${a.name}/${a.role}`)], ['coder-tester', 4, ['coder/Coder', 'tester/Tester']]);
  const env = codeEnv('p', 1);
  const sampler = versionSampler();
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS });

  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => `${r.meta!.agent}@${r.meta!.t}`)), [
    ['coder@0', 'tester@0'],
    ['coder@1', 'tester@1'],
  ]);
  assert.deepEqual(ep!.actions.map((a) => [a.agent, a.step, a.agentIndex, a.text]), [
    ['coder', 0, 0, 'coder v0'],
    ['tester', 0, 1, 'tester v0'],
    ['coder', 1, 0, 'coder v1'],
    ['tester', 1, 1, 'tester v1'],
  ]);
  assert.deepEqual(ep!.steps.map((s) => [s.t, s.done, s.feedback]), [
    [0, false, "On the Tester's input the program printed 0, expected 1."],
    [1, true, "On the Tester's input the program printed 1, expected 2."],
  ]);
  assert.deepEqual(env.seen.map((s) => s.outputs.map((o) => o.text)), [['coder v0', 'tester v0'], ['coder v1', 'tester v1']]);

  const [coder, tester] = wf.agents;
  // Turn 0: system prompt and the problem only.
  assert.deepEqual(ep!.actions[0]!.promptTokens, tok.encodeChat([{ role: 'system', content: coder!.systemPrompt }, { role: 'user', content: env.firstMessage }], { addGenerationPrompt: true }));
  // Turn 1, symmetric prompts: own previous output, the counterpart's, the feedback, the question.
  const coderTurn1 = tok.decode(ep!.actions[2]!.promptTokens);
  const testerTurn1 = tok.decode(ep!.actions[3]!.promptTokens);
  const user = (prompt: string) => prompt.slice(prompt.indexOf('<|user|>') + 8, prompt.lastIndexOf('<|end|>'));
  assert.equal(
    user(coderTurn1),
    `Problem:\n${env.firstMessage}\n\nYour program from the previous turn:\ncoder v0\n\n` +
      "The test case from the Tester in the previous turn:\ntester v0\n\nResult of the environment's check:\n" +
      "On the Tester's input the program printed 0, expected 1.\n\n" +
      "Your program and the Tester's test case are not yet consistent. First explain briefly where the inconsistency comes from: " +
      "your program, the Tester's test case, or both. Then either revise your program or keep it unchanged if you believe it is correct, " +
      'and give the final version in the required format.',
  );
  assert.equal(
    user(testerTurn1),
    user(coderTurn1)
      .replace('Your program from the previous turn:\ncoder v0', 'Your test case from the previous turn:\ntester v0')
      .replace('The test case from the Tester in the previous turn:\ntester v0', 'The program from the Coder in the previous turn:\ncoder v0')
      .replace("Your program and the Tester's test case", "Your test case and the Coder's program")
      .replace("your program, the Tester's test case", "your test case, the Coder's program")
      .replace('revise your program', 'revise your test case'),
  );
  assert.ok(testerTurn1.startsWith(`<|system|>${tester!.systemPrompt}<|end|>`));
  // Golden results never reach any prompt.
  for (const call of sampler.calls) for (const r of call.requests) assert.ok(!tok.decode(r.prompt).includes('GOLDEN'));
  // Rewards recorded raw: every turn's team reward on its step, each action's role-local reward unweighted.
  assert.deepEqual(ep!.steps.map((s) => s.teamReward), [0.6, 0.6]);
  assert.deepEqual(ep!.actions.map((a) => a.localReward), [0.1, 0.2, 0.1, 0.2]);
});

test('Reasoner–Tool-User: horizon T = 4 when the two never agree; per-agent feedback replaces the shared one', async () => {
  const wf = reasonerToolUser();
  assert.deepEqual(wf.agents.map((a) => `${a.name}/${a.role}`), ['reasoner/Reasoner', 'tool_user/Tool-User']);
  assert.match(wf.agents[0]!.systemPrompt, /after the marker ####/);
  const env = new FakeEnv('m', 'Compute 6*7.', (s) => ({
    teamReward: 0,
    done: false,
    feedback: 'shared',
    feedbackFor: { tool_user: `Traceback at turn ${s.t}` },
  }));
  const sampler = versionSampler();
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS });
  assert.equal(ep!.steps.length, 4);
  assert.deepEqual(ep!.steps.map((s) => s.done), [false, false, false, true]);
  assert.equal(ep!.actions.length, 8);
  const toolUserTurn3 = tok.decode(ep!.actions[7]!.promptTokens);
  assert.ok(toolUserTurn3.includes("Result of the environment's check:\nTraceback at turn 2\n"));
  assert.ok(toolUserTurn3.includes('Your program from the previous turn:\ntool_user v2'));
  assert.ok(toolUserTurn3.includes('The answer from the Reasoner in the previous turn:\nreasoner v2'));
  const reasonerTurn3 = tok.decode(ep!.actions[6]!.promptTokens);
  assert.ok(reasonerTurn3.includes("Result of the environment's check:\nshared\n"));
  // Only the previous turn is shown (prompts do not grow with t).
  assert.ok(!reasonerTurn3.includes('reasoner v1'));
});

test('n agents per role (2, 4, 6, 8 agents): names, one round per turn for all agents, counterparts', async () => {
  for (const n of [1, 2, 3, 4]) {
    const wf = coderTester({ agentsPerRole: n, policies: ['c', 't'].flatMap((r) => Array.from({ length: n }, () => r)) });
    assert.equal(wf.agents.length, 2 * n);
    assert.equal(wf.name, n === 1 ? 'coder-tester' : `coder-tester-${2 * n}`);
    assert.deepEqual(wf.agents.map((a) => a.policy), [...Array(n).fill('c'), ...Array(n).fill('t')]);
  }
  const wf = coderTester({ agentsPerRole: 2 });
  assert.deepEqual(wf.agents.map((a) => a.name), ['coder_1', 'coder_2', 'tester_1', 'tester_2']);
  const envs = [codeEnv('a', 1), codeEnv('b', 0)];
  const sampler = versionSampler();
  const [a, b] = await rollout(wf, envs, { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(sampler.calls.map((c) => c.requests.length), [8, 4]);
  assert.equal(a!.actions.length, 8);
  assert.equal(b!.actions.length, 4);
  const coder2Turn1 = tok.decode(a!.actions.find((x) => x.agent === 'coder_2' && x.step === 1)!.promptTokens);
  assert.ok(coder2Turn1.includes('Your program from the previous turn:\ncoder_2 v0'));
  assert.ok(coder2Turn1.includes('The test case from Tester 1 in the previous turn:\ntester_1 v0'));
  assert.ok(coder2Turn1.includes('The test case from Tester 2 in the previous turn:\ntester_2 v0'));
  assert.ok(!coder2Turn1.includes('coder_1 v0'));

  const paired = coderTester({ agentsPerRole: 2, counterparts: 'same-index' });
  const [c] = await rollout(paired, [codeEnv('c', 1)], { sampler: versionSampler(), tokenizer: tok, params: PARAMS });
  const tester1Turn1 = tok.decode(c!.actions.find((x) => x.agent === 'tester_1' && x.step === 1)!.promptTokens);
  assert.ok(tester1Turn1.includes('The program from the Coder in the previous turn:\ncoder_1 v0'));
  assert.ok(!tester1Turn1.includes('coder_2'));
});
