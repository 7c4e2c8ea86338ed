// The environments inside the Flex-MG runtime: a scripted policy plays the Reasoner / Tool-User and
// Coder / Tester pairs against MathEnv and CodeEnv (programs run in the sandbox).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, coderTester, reasonerToolUser, rollout } from '../../src/workflow/index.ts';
import type { SampleParams } from '../../src/engine/types.ts';
import { CodeEnv, MathEnv } from '../../src/env/index.ts';
import type { CodeProblem, MathProblem } from '../../src/env/datasets/index.ts';

const tok = new CharTokenizer();
const PARAMS: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 400, stopTokenIds: [], stopStrings: [], seed: 1 };
const py = (code: string): string => `\`\`\`python\n${code}\n\`\`\``;

test('Reasoner / Tool-User with MathEnv: disagreement fed back, agreement at turn 1 ends the episode', async () => {
  const problem: MathProblem = { domain: 'math', id: 'half', dataset: 'test', question: 'What is one divided by two?', answer: '\\frac{1}{2}', meta: {} };
  const replies: Record<string, string[]> = {
    reasoner: ['It is three.\n#### 3', 'I was wrong.\n#### 0.5'],
    tool_user: [py('print(1/2)'), py('print(1/2)')],
  };
  const sampler = new ScriptedSampler(tok, (r) => replies[r.meta!.agent as string]![r.meta!.t as number]!);
  const env = new MathEnv(problem, { programTimeoutMs: 10_000 });
  const [ep] = await rollout(reasonerToolUser(), [env], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.steps.map((s) => [s.t, s.teamReward, s.done]), [[0, 1, false], [1, 1, true]]);
  assert.equal(ep!.steps[0]!.feedback, 'reasoner (Reasoner) answered 3\ntool_user (Tool-User): the program printed 0.5\nThe answers do not agree.');
  // The local rewards, raw: Reasoner 0.2 (format only) then 1.0; Tool-User 1.0 twice (the team reward 1 is the steps').
  assert.deepEqual(ep!.actions.map((a) => [a.agent, a.step, a.localReward]), [['reasoner', 0, 0.2], ['tool_user', 0, 1], ['reasoner', 1, 1], ['tool_user', 1, 1]]);
  assert.ok(tok.decode(ep!.actions[2]!.promptTokens).includes('the program printed 0.5'));
  for (const a of ep!.actions) assert.ok(!tok.decode(a.promptTokens).includes('\\frac{1}{2}'), 'the reference answer never reaches a prompt');
  assert.equal(ep!.outcome, 1);
});

test('Coder / Tester with CodeEnv: a wrong declared output, then agreement; golden tests stay hidden', async () => {
  const problem: CodeProblem = {
    domain: 'code', id: 'sq', dataset: 'test', statement: 'Read n and print n squared.',
    tests: { kind: 'stdio', tests: [{ stdin: '3\n', stdout: '9\n' }, { stdin: '11\n', stdout: '121\n' }] },
    referenceSolution: 'n = int(input())\nprint(n * n)\n', meta: {},
  };
  const tc = (i: string, o: string): string => `**Test Input:**\n\`\`\`\n${i}\n\`\`\`\n**Test Output:**\n\`\`\`\n${o}\n\`\`\``;
  const replies: Record<string, string[]> = { coder: [py('n = int(input())\nprint(n * n)'), py('n = int(input())\nprint(n * n)')], tester: [tc('4', '8'), tc('4', '16')] };
  const sampler = new ScriptedSampler(tok, (r) => replies[r.meta!.agent as string]![r.meta!.t as number]!);
  const env = new CodeEnv(problem, { programTimeoutMs: 10_000 });
  const [ep] = await rollout(coderTester(), [env], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.steps.map((s) => [s.t, s.teamReward, s.done]), [[0, 1, false], [1, 1, true]]);
  assert.equal(ep!.steps[0]!.feedback, `coder's program on tester's case: on test input "4\\n", the program printed "16\\n", while the declared expected output was "8\\n". They disagree.`);
  for (const a of ep!.actions) assert.ok(!tok.decode(a.promptTokens).includes('121'), 'golden tests never reach a prompt');
  assert.deepEqual(env.finalScore().info['caseChecks'], [{ coder: 'coder', tester: 'tester', status: 'ok', agree: true }]);
});
