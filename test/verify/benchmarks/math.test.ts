// MATH's own scorer (hendrycks/math): last \boxed{} extraction and is_equiv. The is_equiv cases are
// the authors' own, from hendrycks/math modeling/math_equivalence_test.py (the same cases close
// modeling/equivalent.py, the module modeling/eval_math_gpt.py grades with). Their Python string
// literals are written here as raw strings: Python "\\frac" is the text \frac, "\\\\frac" is \\frac.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hendrycksIsEquiv, scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { lastBoxedOnlyString, removeBoxed, stripString } from '../../../src/verify/math/benchmarks/hendrycks-normalize.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';

const r = String.raw;

// [test name in math_equivalence_test.py, test_in, test_out, expected]
const AUTHORS_CASES: Array<[string, string, string, boolean]> = [
  ['test_fractions', r`\tfrac{1}{2} + \frac1{72}`, r`\\frac{1}{2} + 2/3`, false],
  ['test_order', '10, 4, -2', '4, 10, -2', false],
  ['test_order2', '10, 4, 2', '4, 12, 2', false],
  ['test_dfrac', r`\tfrac{1}{2} +\! \frac1{72}`, r`\\dfrac{1}{2} +\frac{1}{72}`, true],
  ['test_units', r`10\text{ units}`, '10 ', true],
  ['test_units2', r`10\text{ units}`, '100 ', false],
  ['test_dollars', '10', r`\$10`, true],
  ['test_parentheses', r`\left(x-2\right)\left(x+2\right)`, '(x-2)(x+2)', true],
  ['test_decimals', '0.1, 4, 2', '4, .1, 2', false],
  ['test_decimals2', '0.1', '.1', true],
  ['test_percentage', r`10\%`, '10', true],
  ['test_sqrt', r`10\sqrt{3} + \sqrt4`, r`10\sqrt3 + \sqrt{4}`, true],
  ['test_frac', r`\frac34i`, r`\frac{3}{4}i`, true],
  ['test_tfrac', r`\tfrac83`, r`\frac{8}{3}`, true],
  ['test_expression', '5x - 7y + 11z + 4 = 0', 'x + y - z + 2 = 0', false],
  ['test_half', '1/2', r`\frac{1}{2}`, true],
];

test("MATH is_equiv: the authors' test cases (hendrycks/math modeling/math_equivalence_test.py)", () => {
  for (const [name, a, b, expected] of AUTHORS_CASES) {
    assert.equal(hendrycksIsEquiv(a, b), expected, `${name}: is_equiv(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
    assert.equal(hendrycksIsEquiv(b, a), expected, `${name} (swapped)`);
  }
});

test('strip_string step by step (modeling/equivalent.py), and its exceptions fall back to raw equality', () => {
  assert.equal(stripString(r`\dfrac{1}{2}`), r`\frac{1}{2}`);
  assert.equal(stripString(r`\frac12`), r`\frac{1}{2}`);
  assert.equal(stripString(r`\frac1{72}`), r`\frac{1}{72}`);
  assert.equal(stripString('0.5'), r`\frac{1}{2}`);
  assert.equal(stripString('3/4'), r`\frac{3}{4}`);
  assert.equal(stripString('03/4'), '03/4', 'not the canonical spelling of int("03")');
  assert.equal(stripString('k = 7'), '7', 'a left side of at most two characters is dropped');
  assert.equal(stripString('abc = 7'), 'abc=7', 'a longer one is kept');
  assert.equal(stripString(r`90^\circ`), '90');
  assert.equal(stripString('50%'), '50%', 'a bare % is not removed by equivalent.py');
  // Two "\text{ " units: the assertion raises and is_equiv compares the raw strings.
  assert.equal(hendrycksIsEquiv(r`1\text{ a}\text{ b}`, r`1\text{ a}\text{ b}`), true);
  assert.equal(hendrycksIsEquiv(r`1\text{ a}\text{ b}`, '1'), false);
  // "\sqrt" at the end raises (an index past the end) too.
  assert.equal(hendrycksIsEquiv(r`2\sqrt`, r`2\sqrt`), true);
  assert.equal(hendrycksIsEquiv(null, null), true);
  assert.equal(hendrycksIsEquiv(null, '1'), false);
});

test('last_boxed_only_string and remove_boxed (modeling/dataset/util.py, eval_math_gpt.py)', () => {
  assert.equal(lastBoxedOnlyString(r`first \boxed{1} then \boxed{\frac{1}{2}} done`), r`\boxed{\frac{1}{2}}`);
  assert.equal(lastBoxedOnlyString(r`only \fbox{3}`), r`\fbox{3}`);
  assert.equal(removeBoxed(r`\fbox{3}`), null, 'remove_boxed accepts \\boxed{ only');
  assert.equal(lastBoxedOnlyString(r`\boxed{unclosed`), null);
  assert.equal(lastBoxedOnlyString('no box'), null);
});

test('the math benchmark: boxed-only extraction, string equivalence, order matters (unlike marft)', () => {
  const solution = r`We compute ... so the answer is $\boxed{\frac{1}{2}}$.`;
  assert.equal(scoreAnswer('math', solution, r`Thus \boxed{\dfrac12}.`), true);
  assert.equal(scoreAnswer('math', solution, r`Thus \boxed{0.5}`), true, 'strip_string spells 0.5 as \\frac{1}{2}');
  assert.equal(scoreAnswer('math', solution, r`Thus \boxed{\frac{2}{4}}`), false, 'no arithmetic');
  assert.equal(scoreAnswer(undefined, solution, r`Thus \boxed{\frac{2}{4}}`), true, "marft's comparison evaluates");
  // An unboxed right answer scores 0 under MATH's extraction, 1 under marft's.
  assert.equal(scoreAnswer('math', '12', 'The answer is 12.'), false);
  assert.equal(scoreAnswer(undefined, '12', 'The answer is 12.'), true);
  // Lists are ordered for MATH, sets for marft.
  assert.equal(scoreAnswer('math', '10, 4, -2', r`\boxed{4, 10, -2}`), false);
  assert.equal(mathAnswersEqual('10, 4, -2', '4, 10, -2'), true);
  assert.equal(scoreAnswer('math', 'x+1', r`\boxed{1+x}`), false);
});
