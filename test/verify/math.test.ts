// The maths verifier: extraction, normalisation, numeric tolerance and symbolic equality
// (spec section 3), including the hard categories of issue 3 item 4.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAnswer, extractAnswerWithSource, extractBoxed, gradeMathResponse, mathAnswersEqual, normalizeAnswer } from '../../src/verify/math/index.ts';

function eq(gold: string, pred: string, expected: boolean): void {
  assert.equal(mathAnswersEqual(gold, pred), expected, `mathAnswersEqual(${JSON.stringify(gold)}, ${JSON.stringify(pred)}) should be ${expected}`);
}

test('extraction: nested \\boxed, \\fbox, adjacent boxes, ####, "the answer is", last number', () => {
  assert.equal(extractBoxed('so $\\boxed{\\frac{1}{\\sqrt{2}}}$.'), '\\frac{1}{\\sqrt{2}}');
  assert.equal(extractBoxed('first \\boxed{3}. Later we find \\boxed{x^{2}+\\{1\\}}'), 'x^{2}+\\{1\\}');
  assert.equal(extractBoxed('\\fbox{42}'), '42');
  assert.equal(extractBoxed('\\boxed 7'), '7');
  assert.equal(extractBoxed('\\boxed{1} and \\boxed{2}'), '1, 2');
  assert.equal(extractBoxed('\\boxed{5}. Then, much later, \\boxed{6}'), '6');
  assert.equal(extractBoxed('no box here'), null);
  assert.deepEqual(extractAnswerWithSource('She makes 9 * 2 = $18.\n#### 18'), { answer: '18', source: 'hashes' });
  assert.deepEqual(extractAnswerWithSource('Thus the answer is $\\frac{3}{4}$. I hope'), { answer: '\\frac{3}{4}', source: 'answer_is' });
  assert.deepEqual(extractAnswerWithSource('Final Answer: The largest $n$ is 34.'), { answer: '34', source: 'answer_is' });
  assert.deepEqual(extractAnswerWithSource('we get 3 apples then 12.5 pears'), { answer: '12.5', source: 'last_number' });
  assert.deepEqual(extractAnswerWithSource('the point is $(1, 2)$ indeed'), { answer: '(1, 2)', source: 'last_math' });
  // A "final answer" sentence after the last box overrides it.
  assert.equal(extractAnswer('\\boxed{200} ... Final Answer: The final answer is $10,455$. I hope it is correct.'), '10,455');
  assert.equal(extractAnswer('nothing numeric'), null);
});

test('normalisation: separators, units, text, degrees, percent, dollars, dfrac, left/right, spacing', () => {
  assert.deepEqual(normalizeAnswer('\\$1{,}000'), { text: '1000', percent: false });
  assert.deepEqual(normalizeAnswer('50\\%'), { text: '50', percent: true });
  assert.deepEqual(normalizeAnswer('10\\text{ cm}^2'), { text: '10', percent: false });
  assert.deepEqual(normalizeAnswer('90^\\circ'), { text: '90', percent: false });
  assert.deepEqual(normalizeAnswer('\\left( \\dfrac{1}{2}, 3 \\right)'), { text: '( \\frac{1}{2}, 3 )', percent: false });
  eq('7425000', '7,425,000', true);
  eq('1000', '1 000', true);
  eq('0.4', '.4', true);
  eq('18', '\\$18.00', true);
  eq('10', '10 \\text{ inches}', true);
  eq('10', '10 meters', true);
  eq('90', '90^{\\circ}', true);
  eq('30^\\circ', '30', true);
  eq('\\text{Evelyn}', 'Evelyn', true);
  eq('\\text{(C)}', 'C', true);
  eq('(C)', '\\textbf{(C)}', true);
  eq('\\text{(C)}', 'D', false);
  eq('1000,99', '1000.99', true);
  eq('3', '3.', true);
});

test('numeric tolerance: exact for integers and exact forms, relative 1e-4 for a decimal approximation', () => {
  eq('\\frac{1}{3}', '0.33333', true);
  eq('\\frac{1}{3}', '0.333', false);
  eq('\\frac{\\sqrt{3}}{2}', '0.86603', true);
  eq('\\frac{\\sqrt{3}}{2}', '0.87', false);
  eq('1000000', '1000050', false);
  eq('1000000', '1000000.0', true);
  eq('13535', '13536', false);
  eq('11111111100', '11,111,111,101', false);
  eq('\\frac{448}{15625}', '\\frac{448}{15626}', false);
  eq('0.35625', '.35626', false);
  eq('13535', '13535.4', false);
  eq('\\frac{14}{3}', '4.6666667', true);
  eq('073', '73', true);
  eq('0', '0.00000', true);
  eq('2', '-2', false);
});

test('percentages: "28\\%" matches 28 and 0.28; a bare 0.28 gold does not match 28', () => {
  eq('28\\%', '28', true);
  eq('28\\%', '0.28', true);
  eq('28\\%', '28 percent', true);
  eq('0.28', '28', false);
  eq('28', '28/100', false);
});

test('symbolic: fractions, radicals, pi, powers, expressions in variables', () => {
  eq('\\frac{1}{2}', '0.5', true);
  eq('\\dfrac{10}{9}', '10/9', true);
  eq('-\\frac{10}{9}', '-10/9', true);
  eq('\\frac{\\sqrt{2}}{2}', '\\frac{1}{\\sqrt2}', true);
  eq('2\\sqrt{3}', '\\sqrt{12}', true);
  eq('2\\sqrt{3}', '\\sqrt{13}', false);
  eq('\\sqrt[3]{8}', '2', true);
  eq('2\\pi', '\\pi \\cdot 2', true);
  eq('\\frac{\\pi}{2}', '90^\\circ', false);
  eq('2^{10}', '1024', true);
  eq('10^{-3}', '0.001', true);
  eq('\\binom{5}{2}', '10', true);
  eq('x^2+2x+1', '(x+1)^2', true);
  eq('x^2+2x+1', '(x+1)^3', false);
  eq('\\frac{1}{2n+2}', '\\frac{1}{2(n+1)}', true);
  eq('\\frac{1}{2n+2}', '\\frac{1}{2n+1}', false);
  eq('2-2p', '-2p+2', true);
  eq('e^{2x}', '(e^x)^2', true);
  eq('\\log_2 8', '3', true);
  eq('\\ln(e^3)', '3', true);
  eq('|x|', 'x', false);
  eq('\\sqrt{x^2}', '|x|', true);
  eq('n(n+1)/2', '\\frac{n^2+n}{2}', true);
  eq('n(n+1)/2', '\\frac{n^2-n}{2}', false);
  eq('\\lfloor\\frac{2 n-1}{5}\\rfloor', '\\lfloor\\frac{2 n-1}{6}\\rfloor', false);
});

test('complex numbers: parts compared exactly', () => {
  eq('6 - 5i', '-5i+6', true);
  eq('6 - 5i', '6+5i', false);
  eq('1+2i', '(1+i)^2+1', true);
  eq('-1', 'i^2', true);
  eq('-i', '\\frac{1}{i}', true);
  eq('2i', '\\sqrt{-4}', true);
  eq('1+274i', '1+273i', false);
  eq('-1', 'e^{i\\pi}', true);
});

test('intervals: brackets matter; unions are unordered; inequalities become intervals', () => {
  eq('[0,1)', '[0, 1)', true);
  eq('[0,1)', '[0,1]', false);
  eq('(0,9)', '[0,9)', false);
  eq('(-\\infty, 3]', 'x \\le 3', true);
  eq('(-\\infty, 3)', 'x \\le 3', false);
  eq('x < 1', '-x > -1', true);
  eq('[-2, 7]', '-2 \\leq x \\leq 7', true);
  eq('(-\\infty,1)\\cup(2,\\infty)', '(2,\\infty)\\cup(-\\infty,1)', true);
  eq('(-\\infty,1)\\cup(2,\\infty)', '(-\\infty,1)\\cup[2,\\infty)', false);
});

test('sets are unordered, tuples ordered, matrices cell by cell', () => {
  eq('\\{1,2,3\\}', '\\{3,1,2\\}', true);
  eq('\\{1,2,3\\}', '\\{1,2\\}', false);
  eq('(1,2)', '(2,1)', false);
  eq('(3, \\frac{\\pi}{2})', '\\left( 3, \\frac{\\pi}{2} \\right)', true);
  eq('(0;0;0)', '(0,0,0)', true);
  eq('(1,8,19), (2,7,13)', '(2,7,13),(1,8,19)', true);
  eq('\\begin{pmatrix} 0 & 3 \\\\ 0 & -1 \\end{pmatrix}', '\\begin{bmatrix}0&3\\\\0&-1\\end{bmatrix}', true);
  eq('\\begin{pmatrix} 0 & 3 \\\\ 0 & -1 \\end{pmatrix}', '\\begin{pmatrix}0&3\\\\0&1\\end{pmatrix}', false);
  eq('\\begin{pmatrix} 1/2 \\\\ 2 \\end{pmatrix}', '\\begin{pmatrix} 0.5 \\\\ 2 \\end{pmatrix}', true);
});

test('equations and multiple answers', () => {
  eq('3', 'x = 3', true);
  eq('x=3', '3', true);
  eq('y = 2x + 1', 'y=1+2x', true);
  eq('2x+4y-3=0', 'y=-\\frac{1}{2}x+\\frac{3}{4}', true);
  eq('2x+4y-3=0', 'y=-\\frac{1}{2}x+\\frac{1}{4}', false);
  eq('x^2+y^2=1', 'y^2+x^2-1=0', true);
  eq('(p,q)=(3,2)', '(3,2)', true);
  eq('1, 2', '2, 1', true);
  eq('-2, 1', 'x=1 \\text{ or } x=-2', true);
  eq('1\\pm\\sqrt{2}', '1+\\sqrt2, 1-\\sqrt2', true);
  eq('\\pm 2021', '2021', false);
  eq('12 \\text{ and } 13', '12, 13', true);
  eq('19, 46, 82', '21, 36, 82', false);
  eq('k = 45, n = 2', '\\boxed{k = 45} \\quad \\text{and} \\quad \\boxed{n = 2}', true);
});

test('unparsable inputs are never equal to each other unless identical after normalisation', () => {
  eq('\\foo{', '\\bar}', false);
  eq('', '', false);
  eq('5', 'garbage ]]', false);
  eq('\\text{yes}', '\\text{no}', false);
  eq('\\text{yes}', 'Yes', true);
});

test('gradeMathResponse grades a full response', () => {
  assert.deepEqual(gradeMathResponse('204', 'Thus she walks for $\\boxed{204}$ minutes.'), { correct: true, extracted: '204' });
  assert.deepEqual(gradeMathResponse('204', 'I think it is \\boxed{240}.'), { correct: false, extracted: '240' });
  assert.deepEqual(gradeMathResponse('204', 'no idea'), { correct: false, extracted: null });
  assert.deepEqual(gradeMathResponse('18', 'Janet makes 9 * 2 = 18 dollars.\n#### 18'), { correct: true, extracted: '18' });
});

test('large values: integers beyond 2^53 compare exactly; an overflow is not equal to another overflow', () => {
  eq('9999999999999999999999', '9999999999999999999998', false);
  eq('9999999999999999999999', '9,999,999,999,999,999,999,999', true);
  eq('10^{400}', '10^{401}', false);
  eq('\\infty', '\\infty', true);
  eq('-\\infty', '\\infty', false);
});

test('hostile inputs are judged quickly and never throw', () => {
  const start = Date.now();
  eq('1', '('.repeat(40) + 'a'.repeat(5000), false);
  eq('1', '\\frac{'.repeat(300) + '1' + '}{2}'.repeat(300), false);
  eq('2', `\\boxed{1}${' and'.repeat(5000)}\\boxed{2}`, true);
  eq('1', '\\left('.repeat(50), false);
  eq('1', 'x'.repeat(100_000), false);
  assert.equal(gradeMathResponse('\\frac{7}{9}', `${'We get $x_1 = 3$ and $$y = \\frac{1}{2}$$. '.repeat(4000)} So $\\boxed{\\frac{7}{9}}$`).correct, true);
  assert.ok(Date.now() - start < 5000, `took ${Date.now() - start} ms`);
});
