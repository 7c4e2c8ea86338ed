// The code environment: team reward = fraction of golden tests passed (src/verify/code), the
// Coder / Tester consistency check with its feedback, and role-local rewards with the spec's weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CodeEnv } from '../../src/env/index.ts';
import { loadDataset, type CodeProblem } from '../../src/env/datasets/index.ts';

const sumProblem: CodeProblem = {
  domain: 'code',
  id: 'sum',
  dataset: 'test',
  statement: 'Read two integers a and b on one line and print a + b.',
  tests: { kind: 'stdio', tests: [{ stdin: '1 2\n', stdout: '3\n' }, { stdin: '5 7\n', stdout: '12\n' }, { stdin: '-1 1\n', stdout: '0\n' }] },
  referenceSolution: 'a, b = map(int, input().split())\nprint(a + b)\n',
  meta: {},
};
const py = (code: string): string => `\`\`\`python\n${code}\n\`\`\``;
const tc = (input: string, output: string): string => `**Test Input:**\n\`\`\`\n${input}\n\`\`\`\n**Test Output:**\n\`\`\`\n${output}\n\`\`\``;
const CORRECT = 'a, b = map(int, input().split())\nprint(a + b)';
const ABS = 'a, b = map(int, input().split())\nprint(abs(a) + abs(b))';
const opts = { programTimeoutMs: 10_000 };

test('pipeline: team reward is the pass fraction of the last program written (1, 2/3, 0)', async () => {
  const env = new CodeEnv(sumProblem, opts);
  assert.equal(env.firstMessage, sumProblem.statement);
  const full = await env.onStep({ t: 0, outputs: [
    { agent: 'planner', role: 'Planner', text: 'Read, add, print.' },
    { agent: 'solver', role: 'Solver', text: py(CORRECT) },
    { agent: 'verifier', role: 'Verifier', text: 'Looks right, no changes.' },
  ] });
  assert.deepEqual(full, { teamReward: 1, done: false });
  const partial = await env.onStep({ t: 1, outputs: [{ agent: 'solver', role: 'Solver', text: py(ABS) }] });
  assert.equal(partial.teamReward, 2 / 3);
  assert.deepEqual(env.finalScore(), { score: 2 / 3, info: { steps: 2, teamAgent: 'solver', passed: 2, total: 3, statuses: ['passed', 'passed', 'wrong_answer'], caseChecks: [] } });
  const none = await env.onStep({ t: 2, outputs: [{ agent: 'solver', role: 'Solver', text: 'no code' }] });
  assert.equal(none.teamReward, 0);
});

test('Coder and Tester agree: done, feedback shows the run, local rewards 1.0 and 1.0', async () => {
  const env = new CodeEnv(sumProblem, opts);
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'coder', role: 'Coder', text: py(CORRECT) },
    { agent: 'tester', role: 'Tester', text: tc('3 4', '7') },
  ] });
  assert.equal(out.teamReward, 1);
  assert.equal(out.done, true);
  assert.deepEqual(out.perAgentReward, { coder: 1, tester: 1 });
  assert.equal(out.feedback, `coder's program on tester's case: on test input "3 4\\n", the program printed "7\\n", while the declared expected output was "7\\n". They agree.`);
});

test('a wrong declared output: they disagree; the Tester gets 0.2 (valid, not reproduced by the reference)', async () => {
  const env = new CodeEnv(sumProblem, opts);
  const out = await env.onStep({ t: 0, outputs: [
    { agent: 'coder', role: 'Coder', text: py(ABS) },
    { agent: 'tester', role: 'Tester', text: tc('3 4', '8') },
  ] });
  assert.equal(out.done, false);
  assert.equal(out.teamReward, 2 / 3);
  assert.deepEqual(out.perAgentReward, { coder: 0.1 + 0.1 + 0.8 * (2 / 3), tester: 0.2 });
  assert.equal(out.feedback, `coder's program on tester's case: on test input "3 4\\n", the program printed "7\\n", while the declared expected output was "8\\n". They disagree.`);
  // Golden tests never reach the agents.
  assert.ok(!out.feedback!.includes('5 7') && !out.feedback!.includes('-1 1'));
});

test('crashing and non-compiling programs: error text in feedback; Coder rewards 0.1 and 0', async () => {
  const env = new CodeEnv(sumProblem, opts);
  const crash = await env.onStep({ t: 0, outputs: [
    { agent: 'coder', role: 'Coder', text: py('a, b = map(int, input().split())\nprint(a // 0)') },
    { agent: 'tester', role: 'Tester', text: tc('3 4', '7') },
  ] });
  assert.deepEqual(crash.perAgentReward, { coder: 0.1, tester: 1 });
  assert.equal(crash.teamReward, 0);
  assert.match(crash.feedback!, /^coder's program on tester's case: on test input "3 4\\n", the program failed \(runtime_error\):\n[\s\S]*ZeroDivisionError/);
  const syntax = await env.onStep({ t: 1, outputs: [
    { agent: 'coder', role: 'Coder', text: py('print(1 +') },
    { agent: 'tester', role: 'Tester', text: 'I think the output is 7' },
  ] });
  assert.deepEqual(syntax.perAgentReward, { coder: 0, tester: 0 });
  assert.equal(syntax.done, false);
  assert.match(syntax.feedback!, /^tester gave no test case in the required format \(Test Input \/ Test Output blocks\)\.$/);
});

test('HumanEval: the canonical solution through the environment scores 1, a stub that returns None scores 0', async () => {
  const humaneval = loadDataset('humaneval').problems as CodeProblem[];
  const p = humaneval.find((x) => x.id === 'HumanEval/0')!;
  const env = new CodeEnv(p, opts);
  assert.equal((await env.onStep({ t: 0, outputs: [{ agent: 'solver', role: 'Solver', text: py(p.referenceSolution!) }] })).teamReward, 1);
  assert.equal((await env.onStep({ t: 1, outputs: [{ agent: 'solver', role: 'Solver', text: py(`def ${p.entryPoint}(numbers, threshold):\n    return None`) }] })).teamReward, 0);
});

test('sameAnswer compares the programs', () => {
  const env = new CodeEnv(sumProblem, opts);
  assert.equal(env.sameAnswer!(py(CORRECT), `again:\n${py(CORRECT)}`), true);
  assert.equal(env.sameAnswer!(py(CORRECT), py(ABS)), false);
});

test('a declared output with the right values in another layout: reproduced by default (values), not under testerComparison "lines"', async () => {
  // The reference prints the sum and the product on two lines; the Tester declares both on one.
  const twoLines: CodeProblem = { ...sumProblem, id: 'sum-product', referenceSolution: 'a, b = map(int, input().split())\nprint(a + b)\nprint(a * b)\n' };
  const outputs = [
    { agent: 'coder', role: 'Coder', text: py('a, b = map(int, input().split())\nprint(a + b)\nprint(a * b)') },
    { agent: 'tester', role: 'Tester', text: tc('3 4', '7 12') },
  ];
  const byValues = new CodeEnv(twoLines, opts);
  const v = await byValues.onStep({ t: 0, outputs });
  assert.equal(v.perAgentReward!.tester, 1);
  assert.deepEqual(byValues.verification()!.testers, [{ agent: 'tester', hasCase: true, reproduced: true }]);
  assert.equal(byValues.verification()!.checks[0]!.agree, true);
  const byLines = new CodeEnv(twoLines, { ...opts, testerComparison: 'lines' });
  const l = await byLines.onStep({ t: 0, outputs });
  assert.equal(l.perAgentReward!.tester, 0.2);
  assert.deepEqual(byLines.verification()!.testers, [{ agent: 'tester', hasCase: true, reproduced: false }]);
  assert.equal(byLines.verification()!.checks[0]!.agree, false);
  // A different value is wrong under both rules.
  const wrong = new CodeEnv(twoLines, opts);
  assert.equal((await wrong.onStep({ t: 0, outputs: [outputs[0]!, { agent: 'tester', role: 'Tester', text: tc('3 4', '7 13') }] })).perAgentReward!.tester, 0.2);
});
