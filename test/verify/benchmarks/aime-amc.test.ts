// AIME as MathArena scores it (eth-sri/matharena src/matharena/parser.py) and AMC 2023 as the
// Qwen2.5-Math evaluation scores it (QwenLM/Qwen2.5-Math evaluation/grader.py). MathArena ships no
// test file: its cases are the behaviours of extract_answer (strict: boxed only), int(), the
// normalize_string rules and check_answers' 1e-10. The AMC cases include the authors' unittest
// TestMathEquality in grader.py (is_numerical_equal and math_equal with numbers and percentages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDataset, type MathProblem } from '../../../src/env/datasets/index.ts';
import { BENCHMARK_SCORERS, scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';

const r = String.raw;

test('AIME (MathArena): the last box only, its integer, leading zeros allowed, an expression of an integer', () => {
  assert.equal(scoreAnswer('aime', '33', r`... \boxed{033}`), true, 'int("033") is 33');
  assert.equal(scoreAnswer('aime', '33', r`first \boxed{32}, finally \boxed{33}`), true);
  assert.equal(scoreAnswer('aime', '33', r`\boxed{\boxed{33}}`), true, 'remove_inner_boxed');
  assert.equal(scoreAnswer('aime', '33', r`\boxed{\frac{66}{2}}`), true, 'parsed and compared within 1e-10');
  assert.equal(scoreAnswer('aime', '33', r`\boxed{n = 33}`), true, 'the part after the last "="');
  assert.equal(scoreAnswer('aime', '33', r`\boxed{33 \text{ ways}}`), true, '\\text{...} removed with its contents');
  assert.equal(scoreAnswer('aime', '1000', r`\boxed{1,000}`), true, 'digit,digit joined');
  assert.equal(scoreAnswer('aime', '33', r`\boxed{33.5}`), false);
  assert.equal(scoreAnswer('aime', '33', r`\boxed{34}`), false);
  // Strict parsing: no box, no answer (marft's comparison reads the last number).
  assert.equal(scoreAnswer('aime', '33', 'The answer is 33.'), false);
  assert.equal(scoreAnswer(undefined, '33', 'The answer is 33.'), true);
  assert.equal(BENCHMARK_SCORERS['aime']!.reference('not an integer'), null, 'AIME references are integers');
});

test('AIME: every bundled answer (2024, 2025, Qwen layout) equals itself boxed and zero-padded, and not off by one', () => {
  let n = 0;
  for (const name of ['aime2024', 'aime2025', 'aime2024-qwen']) {
    for (const p of loadDataset(name).problems as MathProblem[]) {
      assert.equal(p.benchmark, 'aime');
      assert.ok(scoreAnswer('aime', p.answer, r`so \boxed{${p.answer.padStart(3, '0')}}.`), `${name} ${p.id}`);
      assert.equal(scoreAnswer('aime', p.answer, r`\boxed{${Number(p.answer) + 1}}`), false);
      n++;
    }
  }
  assert.equal(n, 90);
});

test("AMC 2023 (Qwen2.5-Math math_equal): the authors' unittest cases", () => {
  // TestMathEquality.test_is_numerical_equal / test_math_equal: math_equal(prediction, reference).
  const cases: Array<[string, string, boolean]> = [
    ['10', '10', true],
    ['10', '20', false],
    ['10%', '0.1', true],
    ['10%', '0.2', false],
  ];
  for (const [prediction, reference, expected] of cases) {
    assert.equal(BENCHMARK_SCORERS['amc23']!.equal(reference, prediction), expected, `math_equal(${prediction}, ${reference})`);
  }
});

test('AMC 2023: relative 1e-4, the reference scaled by 1/100 and 100 too, constant expressions by value', () => {
  assert.equal(scoreAnswer('amc23', '27', r`\boxed{27.0}`), true);
  assert.equal(scoreAnswer('amc23', '27', r`\boxed{27.001}`), true, 'within relative 1e-4');
  assert.equal(scoreAnswer('amc23', '27', r`\boxed{27.01}`), false);
  assert.equal(scoreAnswer('amc23', '27', r`\boxed{0.27}`), true, 'include_percentage: reference / 100');
  assert.equal(scoreAnswer('amc23', '27', r`\boxed{2700}`), true, 'include_percentage: reference × 100');
  assert.equal(mathAnswersEqual('27', '2700'), false, "marft's comparison has no percent variants for plain numbers");
  assert.equal(scoreAnswer('amc23', r`\frac{9}{4}`, r`\boxed{2.25}`), true);
  assert.equal(scoreAnswer('amc23', '4.2426', r`\boxed{3\sqrt{2}}`), true, 'N(a) against N(b) at relative 1e-4');
  assert.equal(scoreAnswer('amc23', '27', 'The answer is 27.'), true, "the harness's extraction falls back to the answer sentence");
  for (const p of loadDataset('amc23').problems as MathProblem[]) {
    assert.equal(p.benchmark, 'amc23');
    assert.ok(scoreAnswer('amc23', p.answer, r`\boxed{${p.answer}}`), p.id);
    assert.equal(scoreAnswer('amc23', p.answer, r`\boxed{${Number(p.answer) + 1}}`), false, p.id);
  }
});
