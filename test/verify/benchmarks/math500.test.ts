// MATH-500's scorer: PRM800K's grade_answer (openai/prm800k grading/grader.py). PRM800K ships no
// test file; the cases below are the behaviours its code comments and docstrings state, each
// quoted, plus pylatexenc 2's documented rendering that the grader depends on ("\frac" -> "%s/%s").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { prm800kGradeAnswer, scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { prm800kNormalize } from '../../../src/verify/math/benchmarks/prm800k.ts';
import { latexToText } from '../../../src/verify/math/benchmarks/latex-to-text.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';

const r = String.raw;

function grade(groundTruth: string, given: string, expected: boolean, why: string): void {
  assert.equal(prm800kGradeAnswer(given, groundTruth), expected, `grade_answer(${JSON.stringify(given)}, ${JSON.stringify(groundTruth)}): ${why}`);
}

test('"be at least as lenient as mathd": the MATH normalisation decides first', () => {
  grade(r`\frac{1}{2}`, r`\dfrac12`, true, 'mathd spells both \\frac{1}{2}');
  grade(r`\left( 3, \frac{\pi}{2} \right)`, r`(3,\frac{\pi}{2})`, true, 'MATH-500 problem 1, \\left/\\right and spaces dropped');
  grade('10', r`10\text{ cm}`, true, 'a "\\text{ " unit');
  grade(r`\text{Evelyn}`, 'Evelyn', true, 'an enclosing \\text{} is unwrapped');
  grade(r`\text{Evelyn}`, 'evelyn', true, '"don\'t be case sensitive for text answers"');
});

test('"if fractions aren\'t reduced, then shouldn\'t be marked as correct"', () => {
  grade('1/2', '2/4', false, 'two a/b fractions must be identical');
  grade(r`\frac{1}{2}`, '2/4', false, '\\frac{1}{2} renders as 1/2');
  grade(r`\frac{1}{2}`, '0.5', true, 'a decimal is not a fraction: sympy decides, 1/2 - 0.5 = 0');
  grade(r`\frac{1}{3}`, '0.3333', false, "sympy's arithmetic is exact: no tolerance");
});

test('"if the ground truth answer is an integer, we require the given answer to be a strict match"', () => {
  grade('5', r`\frac{10}{2}`, false, 'an integer reference and a non-integer string');
  grade('5', '5.0', true, '5.0 normalises to the integer 5');
  grade('1000', '1,000', true, '"1,000" is an integer once its commas are stripped');
  grade('9', '9.0000001', true, 'within 1e-7 of an integer counts as one (and is then truncated to 9)');
});

test('_inject_implicit_mixed_number: "7 3/4 => 7+3/4"; split_tuple keeps tuples ordered and their brackets', () => {
  grade(r`7\frac{3}{4}`, '7.75', true, 'the space put before \\frac makes a mixed number');
  grade('(1,2)', '(2,1)', false, 'items in order');
  grade('[1,2)', '(1,2)', false, 'the outer brackets must match');
  grade('(1,2)', '(1.0,2)', true, 'item by item');
  grade('1, 2', '2, 1', false, 'an unbracketed list is one item, a Python tuple that sympy cannot subtract');
  assert.equal(mathAnswersEqual('1, 2', '2, 1'), true, "marft's comparison treats it as a set");
});

test('sympy equality and should_allow_eval (at most two unknown letters, no "^{", no long exponents)', () => {
  grade(r`2\sqrt{3}`, r`\sqrt{12}`, true, 'sqrt(12) - 2sqrt(3) simplifies to 0');
  grade('x^{4}-2 x^{3}-13 x^{2}+14 x+24', '24 + 14*x + (-13)*x^2 - 2*x^3 + x^4', true, "the example in DeepScaleR's math_reward.py");
  grade('3+4i', '4i+3', true, 'i is a symbol to sympy');
  grade(r`\pi`, '3.14159', false, 'exact pi');
  grade('(a+b)a', 'a^2+ab', true, 'two letters: allowed');
  grade('(a+b)c', 'ac+bc', false, 'three letters: never evaluated');
  grade('2^{10}', '1024', false, 'an integer reference needs an integer string');
});

test("pylatexenc 2 renders \\frac{a}{b} as a/b with no parentheses, and the grader inherits its reading", () => {
  assert.equal(latexToText(r`\frac{1+\sqrt{5}}{2}`), '1+√(5)/2');
  assert.equal(prm800kNormalize(r`\frac{1+\sqrt{5}}{2}`), '1+sqrt(5)/2');
  grade(r`\frac{1+\sqrt{5}}{2}`, r`\frac{1+\sqrt5}{2}`, true, 'written alike');
  grade(r`\frac{1+\sqrt{5}}{2}`, r`(1+\sqrt{5})/2`, false, 'the reference reads 1 + sqrt(5)/2');
  assert.equal(mathAnswersEqual(r`\frac{1+\sqrt{5}}{2}`, r`(1+\sqrt{5})/2`), true, "marft's comparison evaluates the LaTeX");
  assert.equal(prm800kNormalize(r`(-\infty, 3]`), '(-inf,3]');
  assert.equal(prm800kNormalize(r`\$1{,}000`), '1000');
  assert.equal(prm800kNormalize('5 degrees'), '5');
  assert.equal(prm800kNormalize('2 million'), '2*10^6');
});

test('math500 benchmark: every MATH-500 answer equals itself boxed and its worked solution; none equals itself with its last digit changed', () => {
  const rows = readFileSync(new URL('../../../data/math500/test.jsonl', import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { answer: string; solution: string });
  let changed = 0;
  for (const row of rows) {
    assert.ok(scoreAnswer('math500', row.answer, r`so the answer is $\boxed{${row.answer}}$.`), row.answer);
    assert.ok(scoreAnswer('math500', row.answer, row.solution), `solution of ${row.answer}`);
    const m = /(\d)(?!.*\d)/s.exec(row.answer);
    if (!m) continue;
    changed++;
    const other = row.answer.slice(0, m.index) + String((Number(m[1]) + 1) % 10) + row.answer.slice(m.index + 1);
    assert.equal(scoreAnswer('math500', row.answer, r`\boxed{${other}}`), false, `${row.answer} against ${other}`);
  }
  assert.equal(rows.length, 500);
  assert.equal(changed, 489);
  // The extraction: the last \boxed{}, else PRM800K's "# Answer" line; nothing else.
  assert.equal(scoreAnswer('math500', '42', 'Step 1 ...\n\n# Answer\n\n42'), true);
  assert.equal(scoreAnswer('math500', '42', 'The answer is 42.'), false);
});
