// PAC: the verdict templates as golden strings, the four outcomes of each domain, verdicts built
// from a real Reasoner–Tool-User rollout (MathEnv with a scripted program runner), placed in the
// teacher's context of the next turn only, and never containing a reference value. The conclusions
// state facts only, as the paper's verdicts do (App. F.6): which artefact is right and which wrong,
// no role addressed and no revision advised (the earlier texts added "the Reasoner should revise
// its derivation" and the like, issue 19).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MathEnv } from '../../src/env/math-env.ts';
import { mathAttributor } from '../../src/opd/math-attributor.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';
import { teacherRequests, type TeacherScoring } from '../../src/opd/teacher-estimator.ts';
import { codeAttribution, mathAttribution, renderVerdict } from '../../src/opd/pac.ts';
import { DEFAULT_ROLE_CONDITIONS } from '../../src/opd/role-conditions.ts';
import { PAPER_OPD_SETTINGS } from '../../src/opd/settings.ts';
import { TurnRecordingEnv } from '../../src/opd/turn-recording-env.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import type { Tokenizer } from '../../src/tokenizer/types.ts';
import { ScriptedSampler, reasonerToolUser, rollout } from '../../src/workflow/index.ts';
import type { RunOutcome } from '../../src/sandbox/index.ts';

test('maths verdict: header, observation and conclusion lines', () => {
  const v = renderVerdict(
    mathAttribution([
      { agent: 'reasoner', role: 'Reasoner', answer: '14', correct: false },
      { agent: 'tool_user', role: 'Tool-User', answer: '11', programStatus: 'ok', correct: true },
    ]),
  );
  assert.equal(
    v,
    'Verification result for the previous turn:\n' +
      '- Observation: The derivation reported 14 and the program printed 11.\n' +
      '- Conclusion: DERIVATION_INCONSISTENT. The derivation is wrong and the computation is right.',
  );
  const outcome = (r: boolean, t: boolean) =>
    mathAttribution([
      { agent: 'reasoner', role: 'Reasoner', answer: '1', correct: r },
      { agent: 'tool_user', role: 'Tool-User', answer: null, programStatus: 'runtime_error', correct: t },
    ]);
  assert.equal(outcome(true, false).conclusion, 'COMPUTATION_INCONSISTENT');
  assert.equal(outcome(false, false).conclusion, 'BOTH_INCONSISTENT');
  assert.equal(outcome(true, true).conclusion, 'BOTH_CONSISTENT');
  assert.equal(outcome(true, false).observations[0], 'The derivation reported 1 and the program printed nothing (the program failed: runtime_error).');
  assert.deepEqual([outcome(true, false), outcome(false, false), outcome(true, true)].map((a) => a.finding), [
    'The computation is wrong and the derivation is right.',
    'Both the derivation and the computation are wrong.',
    'Both the derivation and the computation are right.',
  ]);
});

test('maths verdict with more than two agents: one line per agent by rules', () => {
  const a = mathAttribution([
    { agent: 'reasoner_1', role: 'Reasoner', answer: '3', correct: true },
    { agent: 'reasoner_2', role: 'Reasoner', answer: '4', correct: false },
    { agent: 'tool_user_1', role: 'Tool-User', answer: '3', programStatus: 'ok', correct: true },
    { agent: 'tool_user_2', role: 'Tool-User', answer: '3', programStatus: 'ok', correct: true },
  ]);
  assert.deepEqual(a.observations, [
    'reasoner_1 (Reasoner): the derivation reported 3, consistent with the problem.',
    'reasoner_2 (Reasoner): the derivation reported 4, inconsistent with the problem.',
    'tool_user_1 (Tool-User): the program printed 3, consistent with the problem.',
    'tool_user_2 (Tool-User): the program printed 3, consistent with the problem.',
  ]);
  assert.equal(a.conclusion, 'DERIVATION_INCONSISTENT');
});

test('code verdict: the first failing sample and the four outcomes', () => {
  const sample = { input: '3 4\n', printed: '8\n', declared: '7\n' };
  assert.equal(
    renderVerdict(codeAttribution({ programCorrect: false, testCorrect: true, sample })),
    'Verification result for the previous turn:\n' +
      '- Observation: On test input "3 4", the program printed "8", while the declared expected output was "7".\n' +
      '- Conclusion: PROGRAM_INCONSISTENT. The program is wrong and the test case is right.',
  );
  assert.deepEqual([[true, false], [false, false], [true, true]].map(([p, t]) => { const a = codeAttribution({ programCorrect: p!, testCorrect: t!, sample }); return `${a.conclusion}. ${a.finding}`; }), [
    'TEST_INCONSISTENT. The test case is wrong and the program is right.',
    'BOTH_INCONSISTENT. Both the program and the test case are wrong.',
    'BOTH_CONSISTENT. Both the program and the test case are right.',
  ]);
  assert.equal(codeAttribution({ programCorrect: false, testCorrect: false, sample: null }).conclusion, 'BOTH_INCONSISTENT');
  // A run that crashed shows its error (the traceback's last line), not the empty output it printed.
  const crash = { input: '0\n', printed: '', declared: '1\n', failure: { status: 'runtime_error', error: 'Traceback (most recent call last):\n  File "main.py", line 1\nZeroDivisionError: division by zero' } };
  assert.deepEqual(codeAttribution({ programCorrect: false, testCorrect: true, sample: crash }).observations, ['On test input "0", the program failed (runtime_error: "ZeroDivisionError: division by zero"), while the declared expected output was "1".']);
});

test('no verdict addresses a role or advises a revision', () => {
  const math = (r: boolean, t: boolean) => renderVerdict(mathAttribution([{ agent: 'reasoner', role: 'Reasoner', answer: '1', correct: r }, { agent: 'tool_user', role: 'Tool-User', answer: '2', programStatus: 'ok', correct: t }]));
  const code = (p: boolean, t: boolean) => renderVerdict(codeAttribution({ programCorrect: p, testCorrect: t, sample: { input: '1', printed: '2', declared: '3' } }));
  for (const [a, b] of [[true, true], [true, false], [false, true], [false, false]] as const) {
    for (const v of [math(a, b), code(a, b)]) assert.doesNotMatch(v.split('- Conclusion: ')[1]!, /Reasoner|Tool-User|Coder|Tester|should|revise|fault/, v);
  }
});

/** A Reasoner–Tool-User episode, horizon 3: turn 0 disagrees, turn 1 disagrees, turn 2 agrees. */
async function pairEpisode(reference: string) {
  const tokenizer = new CharTokenizer();
  const printed = ['7', '9', '12'];
  const said = ['5', '8', '12'];
  const runProgram = async ({ source }: { source: string }): Promise<RunOutcome> => ({ status: 'ok', exitCode: 0, signal: null, stdout: `${/print\((\d+)\)/.exec(source)![1]}\n`, stderr: '', wallMs: 1 }) as RunOutcome;
  const sampler = new ScriptedSampler(tokenizer, (input) =>
    input.meta!.agent === 'reasoner' ? `so #### ${said[input.meta!.t]}` : '```python\nprint(' + printed[input.meta!.t] + ')\n```',
  );
  const env = new TurnRecordingEnv(new MathEnv({ domain: 'math', id: 'p', dataset: 'test', question: 'What is 3*4?', answer: reference, meta: {} }, { runProgram }));
  const [episode] = await rollout(reasonerToolUser({ horizon: 3 }), [env], {
    sampler, tokenizer, keepMessages: true,
    params: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 64, stopTokenIds: [], stopStrings: [], seed: 0 },
  });
  return { episode: episode!, tokenizer };
}

/** The teacher's inputs for every turn of the episodes (src/opd/teacher-estimator.ts), each with its turn and the student's prompt. */
async function buildResponses(episodes: Episode[], tokenizer: Tokenizer) {
  const scoring: TeacherScoring = { tokenizer, conditions: DEFAULT_ROLE_CONDITIONS, attribute: mathAttributor, settings: { ...PAPER_OPD_SETTINGS } };
  const { requests, conclusions } = await teacherRequests(episodes, new Map([['reasoner', 'Reasoner'], ['tool_user', 'Tool-User']]), scoring);
  return { conclusions, responses: requests.map((r) => ({ ...r, t: r.action.step, promptTokens: r.action.promptTokens })) };
}

test('PAC on a real rollout: verdicts of turn t enter the teacher context of turn t+1 only, never a student prompt', async () => {
  const { episode, tokenizer } = await pairEpisode('12');
  assert.equal(episode.steps.length, 3);
  const { responses, conclusions } = await buildResponses([episode], tokenizer);
  assert.deepEqual(conclusions, ['BOTH_INCONSISTENT', 'BOTH_INCONSISTENT', 'BOTH_CONSISTENT']);
  for (const r of responses) {
    const studentText = tokenizer.decode(r.promptTokens);
    const teacherText = tokenizer.decode(r.teacherPrompt);
    const contrastText = tokenizer.decode(r.contrastPrompt!);
    assert.ok(!studentText.includes('Verification result'), 'no verdict in a student prompt');
    assert.ok(!studentText.includes('collaborative'), 'no role condition in a student prompt');
    assert.ok(teacherText.includes(`You are the ${r.role} in a collaborative`));
    assert.ok(!teacherText.includes(`You are the ${r.role}. `), 'the role line is gone');
    assert.ok(!teacherText.includes('You work with') && !contrastText.includes('You work with'), 'so is the sentence naming the collaborator (opd.roleLine: role-sentences)');
    if (r.t === 0) assert.ok(!teacherText.includes('Verification result'));
    if (r.t === 1) assert.ok(teacherText.endsWith('- Observation: The derivation reported 5 and the program printed 7.\n- Conclusion: BOTH_INCONSISTENT. Both the derivation and the computation are wrong.<|end|><|assistant|>'));
    if (r.t === 2) assert.ok(teacherText.includes('The derivation reported 8 and the program printed 9.') && !teacherText.includes('reported 5'));
    // The RAS contexts: the same text once the two conditions are cut out.
    const cut = (s: string) => s.replace(/You are the [\s\S]*?primary responsibility of [^.]*\./, '');
    assert.equal(cut(teacherText), cut(contrastText));
  }
});

test('a verdict never contains a reference value (adversarial reference)', async () => {
  const { episode, tokenizer } = await pairEpisode('271828');
  const { responses, conclusions } = await buildResponses([episode], tokenizer);
  assert.ok(conclusions.every((c) => c === 'BOTH_INCONSISTENT'));
  for (const r of responses) assert.ok(!tokenizer.decode(r.teacherPrompt).includes('271828'));
  // And with a reference the agents did reach, the verdict reports only what they produced.
  const { episode: e2 } = await pairEpisode('12');
  const turns = e2.info.turns as unknown[];
  assert.equal(turns.length, 3);
  assert.equal(mathAttributor(e2, 0)!.observations[0], 'The derivation reported 5 and the program printed 7.');
});
