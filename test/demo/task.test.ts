// The demo's task, teacher, split and prompts (fast tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedSampler } from '../../src/workflow/index.ts';
import { playDuo } from '../../src/tasks/arith-duo/arith-task.ts';
import { transcriptBatch } from '../../src/tasks/arith-duo/corpus.ts';
import { Rng } from '../../src/core/rng.ts';
import { allProblems, correctReduction, evaluatePlan, extractAnswer, isRightPlan, makeProblem, parsePlan, partialResults, rewrittenValue, splitProblems, stepOf } from '../../src/tasks/arith-duo/task.ts';
import { teacherTranscript } from '../../src/tasks/arith-duo/teacher.ts';
import { DEMO_ALPHABET, demoTokenizer } from '../../src/tasks/arith-duo/vocab.ts';

test('problems follow operator precedence, left to right at equal precedence', () => {
  assert.equal(makeProblem(3, '+', 4, '*', 2).answer, 11);
  assert.equal(makeProblem(3, '*', 4, '+', 2).answer, 14);
  assert.equal(makeProblem(8, '-', 2, '-', 3).answer, 3);
  assert.equal(makeProblem(2, '-', 3, '*', 4).answer, -10);
  assert.equal(makeProblem(9, '-', 5, '+', 1).answer, 5);
  assert.equal(correctReduction(makeProblem(3, '+', 4, '*', 2)), 1);
  assert.equal(correctReduction(makeProblem(3, '*', 4, '*', 2)), 0);
  const all = allProblems();
  assert.equal(all.length, 3899);
  assert.equal(new Set(all.map((p) => p.text)).size, 3899);
  assert.ok(all.every((p) => partialResults(p).every((v) => Math.abs(v) <= 20)));
  assert.ok(!all.some((p) => p.text === '9*9+1'));
});

test('the held-out split is fixed, disjoint from training and independent of the run seed', () => {
  const a = splitProblems(1000);
  const b = splitProblems(1000);
  assert.equal(a.heldOut.length, 1000);
  assert.equal(a.train.length, 2899);
  assert.deepEqual(a.heldOut.map((p) => p.text), b.heldOut.map((p) => p.text));
  const train = new Set(a.train.map((p) => p.text));
  assert.ok(a.heldOut.every((p) => !train.has(p.text)));
  // A smaller held-out set is a prefix of the larger one: quick runs score a subset of the same problems.
  assert.deepEqual(splitProblems(500).heldOut.map((p) => p.text), a.heldOut.slice(0, 500).map((p) => p.text));
});

test('answers and plans are parsed from the agents’ texts', () => {
  const p = makeProblem(3, '+', 4, '*', 2);
  assert.equal(extractAnswer('3+8=11'), 11);
  assert.equal(extractAnswer('-1*4=-4'), -4);
  assert.equal(extractAnswer('3+8'), null);
  assert.deepEqual(parsePlan(p, '3+8'), { reduction: 1, value: 8 });
  assert.deepEqual(parsePlan(p, '7*2'), { reduction: 0, value: 7 });
  assert.deepEqual(parsePlan(p, '3*8'), { reduction: null, value: null });
  assert.deepEqual(parsePlan(p, '4*2=8'), { reduction: null, value: null });
  assert.equal(isRightPlan(p, '3+8'), true);
  assert.equal(isRightPlan(p, '3+9'), false);
  assert.equal(isRightPlan(p, '7*2'), false);
  assert.equal(evaluatePlan('3+8'), 11);
  assert.equal(evaluatePlan('3--2'), 5);
  assert.equal(evaluatePlan('-1*4'), -4);
  assert.equal(evaluatePlan('3+'), null);
  // Where both orders give the same answer (a+b-c), either reduction is a right plan.
  assert.equal(isRightPlan(makeProblem(5, '+', 4, '-', 2), '5+2'), true);
  assert.equal(isRightPlan(makeProblem(5, '+', 4, '-', 2), '9-2'), true);
  // A wrong intermediate value on the right operator substitutes into a negative operand: "3--2".
  assert.deepEqual(parsePlan(makeProblem(3, '-', 2, '-', 4), '3--2'), { reduction: 1, value: -2 });
});

test('the teacher is wrong in the stated proportions', () => {
  const rng = new Rng(7);
  const problems = splitProblems().train;
  const n = 20000;
  let wrongOrder = 0;
  let planSlip = 0;
  let finalSlip = 0;
  for (let i = 0; i < n; i++) {
    const p = problems[i % problems.length]!;
    const t = teacherTranscript(p, rng);
    const plan = parsePlan(p, t.plan);
    assert.ok(plan.reduction !== null && plan.value !== null, t.plan);
    // (a = b = c with o1 = o2 parses as the left reduction either way: a handful of problems.)
    if (plan.reduction !== correctReduction(p)) wrongOrder++;
    if (plan.value !== stepOf(p, plan.reduction).value) planSlip++;
    if (extractAnswer(t.solution) !== rewrittenValue(p, plan.reduction, plan.value)) finalSlip++;
  }
  // Binomial standard deviations at n = 20,000: about 0.0035 (p = 0.5) and 0.0021 (p = 0.1).
  assert.ok(Math.abs(wrongOrder / n - 0.5) < 0.015, `wrong order ${wrongOrder / n}`);
  assert.ok(Math.abs(planSlip / n - 0.1) < 0.01, `plan slips ${planSlip / n}`);
  assert.ok(Math.abs(finalSlip / n - 0.1) < 0.01, `final slips ${finalSlip / n}`);
});

test('the workflow prompts the agents with exactly the token sequences the model is pretrained on', async () => {
  const tokenizer = demoTokenizer();
  assert.equal(tokenizer.vocabSize, 8 + DEMO_ALPHABET.length);
  const problems = splitProblems().train.slice(0, 40);
  // The teacher's transcripts, drawn once with a fixed seed, replayed by a scripted sampler.
  const corpus = transcriptBatch(tokenizer, problems, new Rng(3));
  const transcripts = (() => {
    const rng = new Rng(3);
    return problems.map((p) => teacherTranscript(p, rng));
  })();
  const byProblem = new Map(problems.map((p, i) => [p.text, transcripts[i]!]));
  const sampler = new ScriptedSampler(tokenizer, (input) => {
    const t = byProblem.get(input.meta!.problemId)!;
    return input.meta!.agent === 'planner' ? t.plan : t.solution;
  });
  const episodes = await playDuo(sampler, problems, {}, { temperature: 1, topP: 1, topK: 0, maxNewTokens: 16 }, 1);
  episodes.forEach((e, i) => {
    assert.equal(e.actions.length, 2);
    for (const [k, a] of e.actions.entries()) {
      const expected = corpus[2 * i + k]!;
      assert.deepEqual([...a.promptTokens, ...a.actionTokens], expected.tokens, `${e.problemId} ${a.agent}`);
      assert.equal(a.promptTokens.length, expected.scoreFrom);
    }
    const t = transcripts[i]!;
    assert.equal(e.outcome, extractAnswer(t.solution) === problems[i]!.answer ? 1 : 0);
    assert.equal(e.steps[0]!.teamReward, e.outcome);
  });
  // The tokens never fall outside the alphabet.
  const unk = tokenizer.specialId('<unk>');
  assert.ok(corpus.every((r) => !r.tokens.includes(unk)));
});
