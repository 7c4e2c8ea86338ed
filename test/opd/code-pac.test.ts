// PAC for the Coder–Tester pair: verdicts built from real rollouts through the sandbox (CodeEnv runs
// the Coder's program on the Tester's case, the golden tests and the reference solution), on an MBPP
// problem through the workflow task's own MAS-OPD view, placed in the next turn's teacher context
// only, and never containing a reference value (an adversarial golden output and reference output).
// Conclusions state facts only (the paper's App. F.6; no "the Coder should revise its program"), and
// a program that crashed on the Tester's case shows its error, not its empty output (issue 19).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CodeEnv } from '../../src/env/code-env.ts';
import type { CodeProblem } from '../../src/env/datasets/index.ts';
import { codeAttributor } from '../../src/opd/code-attributor.ts';
import { teacherRequests, type TeacherScoring } from '../../src/opd/teacher-estimator.ts';
import { DEFAULT_ROLE_CONDITIONS } from '../../src/opd/role-conditions.ts';
import { PAPER_OPD_SETTINGS } from '../../src/opd/settings.ts';
import { TurnRecordingEnv } from '../../src/opd/turn-recording-env.ts';
import { createWorkflowTask, taskCharTokenizer, type WorkflowTask } from '../../src/tasks/index.ts';
import type { Tokenizer } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, coderTester, rollout, type ActionSampler, type Episode, type TaskEnv, type Workflow } from '../../src/workflow/index.ts';

const py = (code: string): string => `\`\`\`python\n${code}\n\`\`\``;
const tc = (input: string, output: string): string => `Test Input:\n\`\`\`\n${input}\n\`\`\`\nTest Output:\n\`\`\`\n${output}\n\`\`\``;
const params = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4000, stopTokenIds: [], stopStrings: [], seed: 0 };

async function play(workflow: Workflow, env: TaskEnv, sampler: ActionSampler, tokenizer: Tokenizer): Promise<Episode> {
  const [episode] = await rollout(workflow, [new TurnRecordingEnv(env)], { sampler, tokenizer, keepMessages: true, params });
  return episode!;
}

/** The teacher's inputs for every turn of the episodes (src/opd/teacher-estimator.ts), each with its turn and the student's prompt. */
async function buildResponses(episodes: Episode[], tokenizer: Tokenizer) {
  const scoring: TeacherScoring = { tokenizer, conditions: DEFAULT_ROLE_CONDITIONS, attribute: codeAttributor, settings: { ...PAPER_OPD_SETTINGS } };
  const { requests, conclusions } = await teacherRequests(episodes, new Map([['coder', 'Coder'], ['tester', 'Tester']]), scoring);
  return { conclusions, responses: requests.map((r) => ({ ...r, t: r.action.step, promptTokens: r.action.promptTokens })) };
}

test('code PAC on an MBPP rollout through the sandbox: PROGRAM_INCONSISTENT, TEST_INCONSISTENT, BOTH_CONSISTENT, each in the next teacher context only', { timeout: 120_000 }, async () => {
  const tokenizer = taskCharTokenizer();
  let task!: WorkflowTask;
  // Turn 0: a wrong program (prints "oops", defines nothing the asserts call) and a right case (the
  // reference prints nothing on an empty input). Turn 1: the reference program and a wrong declared
  // output "x". Turn 2: the reference program and the right case; they agree and the episode ends.
  const sampler = new ScriptedSampler(tokenizer, (input) => {
    const p = task.problems.train.find((x) => x.id === input.meta!.problemId) as CodeProblem;
    const t = input.meta!.t;
    if (input.meta!.agent === 'coder') return py(t === 0 ? "def unrelated():\n    return None\nprint('oops')" : p.referenceSolution!);
    return tc('', t === 1 ? 'x' : '');
  });
  task = createWorkflowTask({ dataset: 'mbpp', workflow: 'coder-tester', horizon: 3, programTimeoutMs: 10_000 }, { tokenizer, sampler: () => sampler });
  const source = task.distillation();
  assert.equal(source.attribute, codeAttributor, 'the workflow task gives the code pair its PAC rules');
  const [env] = source.trainEnvs(1, 3);
  const episode = await play(source.workflow, env!, sampler, tokenizer);
  assert.equal(episode.steps.length, 3);
  assert.deepEqual([0, 1, 2].map((t) => codeAttributor(episode, t)!.conclusion), ['PROGRAM_INCONSISTENT', 'TEST_INCONSISTENT', 'BOTH_CONSISTENT']);
  assert.deepEqual(codeAttributor(episode, 0)!.observations, ['On test input "", the program printed "oops", while the declared expected output was "".']);
  assert.deepEqual(codeAttributor(episode, 1)!.observations, ['On test input "", the program printed "", while the declared expected output was "x".']);
  assert.equal(codeAttributor(episode, 3), null, 'no turn 3');

  const { responses, conclusions } = await buildResponses([episode], tokenizer);
  assert.deepEqual(conclusions, ['PROGRAM_INCONSISTENT', 'TEST_INCONSISTENT', 'BOTH_CONSISTENT']);
  assert.equal(responses.length, 6);
  for (const r of responses) {
    const studentText = tokenizer.decode(r.promptTokens);
    const teacherText = tokenizer.decode(r.teacherPrompt);
    assert.ok(!studentText.includes('Verification result') && !studentText.includes('_INCONSISTENT'), 'no verdict in a student prompt');
    if (r.t === 0) assert.ok(!teacherText.includes('Verification result'), 'no verdict at t = 0');
    if (r.t === 1) {
      assert.ok(teacherText.endsWith(
        '- Observation: On test input "", the program printed "oops", while the declared expected output was "".\n' +
        '- Conclusion: PROGRAM_INCONSISTENT. The program is wrong and the test case is right.<|end|><|assistant|>',
      ), teacherText.slice(-400));
    }
    if (r.t === 2) {
      assert.ok(teacherText.includes('- Conclusion: TEST_INCONSISTENT. The test case is wrong and the program is right.'));
      assert.ok(!teacherText.includes('PROGRAM_INCONSISTENT'), "turn 0's verdict is not carried to turn 2");
    }
  }
});

test('a code verdict never contains a reference value (adversarial golden output and reference solution)', { timeout: 120_000 }, async () => {
  const tokenizer = taskCharTokenizer();
  const problem: CodeProblem = {
    domain: 'code', id: 'adv', dataset: 'test',
    statement: 'Read a line and print the secret word.',
    tests: { kind: 'stdio', tests: [{ stdin: '1\n', stdout: 'GOLDSECRET5519\n' }] },
    referenceSolution: "input()\nprint('REFSECRET7391')\n",
    meta: {},
  };
  // Both turns: the program prints "oops", the Tester declares "maybe" for input "1": neither the
  // golden output nor the reference's output is reached, and no turn agrees (the episode runs both).
  const sampler = new ScriptedSampler(tokenizer, (input) => (input.meta!.agent === 'coder' ? py("input()\nprint('oops')") : tc('1', 'maybe')));
  const episode = await play(coderTester({ horizon: 2 }), new CodeEnv(problem, { programTimeoutMs: 10_000 }), sampler, tokenizer);
  assert.equal(episode.steps.length, 2);
  const verdict = codeAttributor(episode, 0)!;
  assert.equal(verdict.conclusion, 'BOTH_INCONSISTENT');
  assert.deepEqual(verdict.observations, ['On test input "1", the program printed "oops", while the declared expected output was "maybe".']);
  const { responses } = await buildResponses([episode], tokenizer);
  assert.ok(responses.some((r) => tokenizer.decode(r.teacherPrompt).includes('BOTH_INCONSISTENT')));
  for (const r of responses) {
    const teacherText = tokenizer.decode(r.teacherPrompt);
    for (const secret of ['GOLDSECRET5519', 'REFSECRET7391']) assert.ok(!teacherText.includes(secret), `${secret} in turn ${r.t}'s teacher context`);
  }
  // Without a reference solution the Tester's case cannot be judged: no verdict.
  const noRef: CodeProblem = { ...problem, id: 'noref' };
  delete noRef.referenceSolution;
  const e2 = await play(coderTester({ horizon: 1 }), new CodeEnv(noRef, { programTimeoutMs: 10_000 }), sampler, tokenizer);
  assert.equal(codeAttributor(e2, 0), null);
});

test('a Coder program that crashes on the Tester’s case: the verdict shows its error, not an empty output', { timeout: 120_000 }, async () => {
  const tokenizer = taskCharTokenizer();
  const problem: CodeProblem = {
    domain: 'code', id: 'crash', dataset: 'test',
    statement: 'Read n and print n + 1.',
    tests: { kind: 'stdio', tests: [{ stdin: '1\n', stdout: '2\n' }] },
    referenceSolution: 'print(int(input()) + 1)\n',
    meta: {},
  };
  const sampler = new ScriptedSampler(tokenizer, (input) => (input.meta!.agent === 'coder' ? py('n = int(input())\nprint(n / 0)') : tc('1', '2')));
  const episode = await play(coderTester({ horizon: 2 }), new CodeEnv(problem, { programTimeoutMs: 10_000 }), sampler, tokenizer);
  const verdict = codeAttributor(episode, 0)!;
  assert.equal(verdict.conclusion, 'PROGRAM_INCONSISTENT');
  assert.deepEqual(verdict.observations, ['On test input "1", the program failed (runtime_error: "ZeroDivisionError: division by zero"), while the declared expected output was "2".']);
});
