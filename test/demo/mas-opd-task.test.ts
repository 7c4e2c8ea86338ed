// The MAS-OPD study's pieces (fast): the phrase tokenizer, the replies' meaning, and the
// pretraining transcripts (students: their own inputs; teacher: conditions, verdicts, correct replies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PhraseTokenizer } from '../../src/tasks/arith-pair/phrase-tokenizer.ts';
import { finalValue, orderSensitive, reasonerText, studyPhrases, studySplit, studyWorkflow, toolUserText } from '../../src/tasks/arith-pair/study-task.ts';
import { simulateEpisode, studentBatch, teacherBatch } from '../../src/tasks/arith-pair/transcripts.ts';
import { Rng } from '../../src/core/rng.ts';
import { correctReduction, makeProblem } from '../../src/tasks/arith-duo/task.ts';
import { MathEnv } from '../../src/env/math-env.ts';
import { extractPythonCode } from '../../src/workflow/index.ts';

const workflow = studyWorkflow();
const tokenizer = new PhraseTokenizer(studyPhrases(workflow));

test('phrase tokenizer: greedy longest match, exact round trip, chat format', () => {
  const t = new PhraseTokenizer(['ab', 'abc', 'Problem:\n']);
  const ids = t.encode('abcab<|end|>xProblem:\nz');
  assert.deepEqual(ids.map((id) => t.decode([id])), ['abc', 'ab', '<|end|>', 'x', 'Problem:\n', 'z']);
  assert.equal(t.decode(ids), 'abcab<|end|>xProblem:\nz');
  assert.equal(t.renderChat([{ role: 'system', content: 'S' }], { addGenerationPrompt: true }), '<|system|>S<|end|><|assistant|>');
  const text = tokenizer.renderChat(workflow.observe({ agent: workflow.agents[0]!, t: 0, problem: '3+4*2', visible: [], history: [], position: 0, agents: workflow.agents }), { addGenerationPrompt: true });
  assert.equal(tokenizer.decode(tokenizer.encode(text)), text);
  assert.ok(tokenizer.encode(text).length < 15, 'the role prompt is a few phrase tokens');
});

test('the task keeps the problems whose two orders differ; replies say what they mean', () => {
  const p = makeProblem(3, '+', 4, '*', 2);
  assert.ok(orderSensitive(p) && !orderSensitive(makeProblem(1, '+', 2, '+', 3)));
  assert.equal(reasonerText(p, 1), '4*2=8\n3+8=11\n#### 11');
  assert.equal(reasonerText(p, 0), '3+4=7\n7*2=14\n#### 14');
  assert.equal(MathEnv.textAnswer(reasonerText(p, 0)), '14');
  assert.equal(extractPythonCode(toolUserText(p, correctReduction(p))), 'print(3+4*2)\n');
  assert.equal(extractPythonCode(toolUserText(p, 0)), 'print((3+4)*2)\n');
  assert.equal(finalValue(p, 0), 14);
  const split = studySplit(100);
  assert.equal(split.heldOut.length, 100);
  const held = new Set(split.heldOut.map((q) => q.text));
  assert.ok(split.train.every((q) => !held.has(q.text) && orderSensitive(q)));
});

test('transcripts: students get their own inputs and imperfect replies; the teacher conditions, verdicts and correct replies', () => {
  const p = makeProblem(9, '-', 5, '*', 4);
  // Both wrong at turn 0 with wrongOrder 1: they agree on the wrong value and stop.
  assert.equal(simulateEpisode(workflow, p, new Rng(1), { wrongOrder: 1, verdictRate: 1 }).length, 1);
  let multi = simulateEpisode(workflow, p, new Rng(0), { wrongOrder: 0.5, verdictRate: 1 });
  for (let s = 1; multi.length < 2; s++) multi = simulateEpisode(workflow, p, new Rng(s), { wrongOrder: 0.5, verdictRate: 1 });
  assert.equal(multi[0]!.verdict, null);
  assert.match(multi[1]!.verdict!, /^Verification result for the previous turn:\n- Observation: The derivation reported -?\d+ and the program printed -?\d+\.\n- Conclusion: (DERIVATION|COMPUTATION)_INCONSISTENT\. /);
  assert.ok(multi.every((turn) => turn.correct[0] === reasonerText(p, 1) && turn.correct[1] === toolUserText(p, 1)));

  const students = studentBatch(workflow, tokenizer, [p, p, p], new Rng(5), { wrongOrder: 0.5, verdictRate: 1 });
  const teachers = teacherBatch(workflow, tokenizer, [p, p, p], new Rng(5), { wrongOrder: 0.5, verdictRate: 1 });
  const text = (r: { tokens: number[] }) => tokenizer.decode(r.tokens);
  assert.ok(students.every((r) => !text(r).includes('collaborative') && !text(r).includes('Verification result')));
  assert.ok(teachers.every((r) => text(r).includes('in a collaborative mathematical problem-solving system')));
  assert.ok(teachers.some((r) => text(r).includes('Verification result for the previous turn:')));
  // The teacher's replies are always the right ones.
  for (const r of teachers) {
    const reply = tokenizer.decode(r.tokens.slice(r.scoreFrom, -1));
    assert.ok(reply === reasonerText(p, 1) || reply === toolUserText(p, 1), reply);
  }
});

test('transcripts: with teacherConditions both, each seat is also taught under the other role\'s condition, with that role\'s correct reply', () => {
  const p = makeProblem(9, '-', 5, '*', 4);
  const own = teacherBatch(workflow, tokenizer, [p, p], new Rng(5), { wrongOrder: 0.5, verdictRate: 1 });
  const both = teacherBatch(workflow, tokenizer, [p, p], new Rng(5), { wrongOrder: 0.5, verdictRate: 1 }, 'both');
  assert.equal(both.length, 2 * own.length);
  const decode = (r: { tokens: number[]; scoreFrom: number }) => ({ context: tokenizer.decode(r.tokens.slice(0, r.scoreFrom)), reply: tokenizer.decode(r.tokens.slice(r.scoreFrom, -1)) });
  // Pairs in seat order: the seat's own condition first, then the other's; the reply follows the condition.
  for (const r of both.map(decode)) {
    const asToolUser = r.context.includes('You are the Tool-User');
    const asReasoner = r.context.includes('You are the Reasoner');
    assert.ok(asToolUser !== asReasoner, r.context);
    assert.equal(r.reply, asToolUser ? toolUserText(p, 1) : reasonerText(p, 1));
  }
  // Every seat is taught under both conditions: each condition appears as often as the other.
  const conditions = both.map(decode).map((r) => r.context.includes('You are the Tool-User'));
  assert.equal(conditions.filter(Boolean).length, conditions.length / 2);
});
