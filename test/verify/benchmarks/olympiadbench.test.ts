// OlympiadBench's scorer (OpenBMB/OlympiadBench MathJudger). AUTHORS_CASES is every case of the
// authors' eval/scoring_examples.json, judged as their eval/auto_scoring_judge.py judges it:
// judge(GT, answer, precision), precision 1e-8 unless the case names one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { olympiadJudge, olympiadPrecision, scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { loadDataset, type MathProblem } from '../../../src/env/datasets/index.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';

const r = String.raw;

// [GT, answer, equal, precision?]
const AUTHORS_CASES: Array<[string, string, boolean, (number | number[])?]> = [
  ['x=1', 'x=1', true],
  ['x=1', '1', true],
  ['x=1', 'x=2', false],
  [r`a_{n} =2 n    +1`, r`2n+    1`, true],
  [r`a_{n} =2 n    +1`, 'a_n=2n+1', true],
  [r`$I_{\max }=\frac{q_{0}}{\sqrt{2 L C}}$`, r`\frac{ q_{0} }{ \sqrt{2 C L}  }`, true],
  [r`\Phi (x,y)=\frac{x+1}{2y}`, r`\Phi (x,    y)=\frac{x}{2y} + \frac{1}{2y}`, true],
  [r`(-\infty,1]\cup[10,+\infty)`, r`c \in \left(-\infty, 1\right]\cup[10,+\infty)`, true],
  [r`$\boxed{[-4/2, 0.5]}$`, r`[-2, \frac{1}{2}]`, true],
  [
    r`(\frac{\sqrt{2}v^2_0}{g}-\frac{v^2_0}{5\pi g},\frac{\sqrt{2}v^2_0}{g}+\frac{v^2_0}{4g},-\frac{v^2_0}{5\pi g})`,
    r`(\frac{v^2_0 \sqrt{2}}{g}-\frac{v^2_0}{5g\pi },\frac{\sqrt{2}v^2_0}{g}+\frac{v^2_0}{4g},-\frac{v^2_0}{5g \pi})`,
    true,
  ],
  ['(2,1),(3,1)', '(3,1),(2,1)', true],
  ['x^2+y^2=1', r`\boxed{x^{2}+y^{2}=1}`, true],
  ['x^2+y^2=1', r`\boxed{x^{2}=1-y^2}`, true],
  ['x^2+y^2=1', r`\boxed{1-x^{2}-y^{2}=0}`, true],
  ['x^2+y^2=1', r`\boxed{x^{2}-y^{2}=1}`, false],
  ['x^2+y^2=1', r`\boxed{x^{2}+y^{2}=2}`, false],
  ['0.64N', r`\boxed{0.64N}`, true],
  ['0.64N', r`\boxed{\frac{16}{25}N}`, true],
  ['0.64N', '0.6400 N', true],
  ['0.64N', '0.64', false],
  ['0.6', r`\boxed{\frac{3}{5}}`, true],
  ['0.6', '60%', true],
  [r`\cos \theta_1`, r`\cos \theta _1`, true],
  [
    r`\boxed{n_{\gamma}(\nu)=A \frac{R_{\odot}^{2}}{d_{\odot}^{2}} \frac{2 \pi}{c^{2}} \nu^{2} e^{\frac{-h \nu}{ k_{\mathrm{B}} T_{\mathrm{s}}}}}`,
    r`\boxed{n_{\gamma}(\nu) = \frac{2 \pi A R_{\odot}^2}{d_{\odot}^2} \left( \frac{\nu^2}{c^2} \right) e^{ \frac{-h \nu}{k_B T_s}}}`,
    true,
  ],
  [r`\frac{(n-1)!}{k!} \frac{n}{(n-k)!}`, r`\frac{n!}{k!(n-k)!}`, true],
  [r`7.8\times 10^2`, '780', true],
  [r`\Delta p\approx -\frac{\hbar \omega_{L}}{c}`, r`-\frac{\omega_{L} \hbar}{c}`, true],
  [r`a = +\frac{1}{2} \hbar \omega_{L}^{\prime} \frac{v}{c}`, r`\frac{1}{2} \hbar \omega_{L}^{\prime} \frac{v}{c}`, true],
  [r`\cos ^{10}(\frac{\pi}{10})`, '0.6054', true, 1e-4],
  [r`\sqrt[3]{\frac{5}{12}}`, r`(\frac{5}{12})^{\frac{1}{3}}`, true],
  [r`\sqrt[3]{\frac{5}{12}}, -\sqrt[3]{\frac{5}{12}}`, r`y = \pm \sqrt[3]{\frac{5}{12}}`, true],
  [r`7 \times 10^{35}`, r`7.1 \cdot 10^{35}`, true, 1e34],
  [r`7 \times 10^{35}`, r`7.1 \cdot 10^{35}`, false, [1e33]],
  [r`7 \times 10^{35}, 0.002`, r`0.001, 7.1 \cdot 10^{35}`, true, [1e34, 1e-3]],
  ['0.003, 5.233', '0.002, 5.234', true, 1e-3],
  [r`10^{10^{10^{10}}}`, '10^{10}', false],
];

test("OlympiadBench's judge: every case of the authors' eval/scoring_examples.json", () => {
  assert.equal(AUTHORS_CASES.length, 36);
  for (const [gt, answer, expected, precision] of AUTHORS_CASES) {
    assert.equal(olympiadJudge(gt, answer, precision), expected, `judge(${JSON.stringify(gt)}, ${JSON.stringify(answer)}, ${JSON.stringify(precision ?? 1e-8)})`);
  }
});

test("the issue's cases: accepted by OlympiadBench's judge, missed by marft's comparison", () => {
  const cases: Array<[string, string]> = [
    [r`I_{\max }=\frac{q_{0}}{\sqrt{2 L C}}`, r`\frac{ q_{0} }{ \sqrt{2 C L}  }`], // commuted product under a root
    ['0.64N', r`\frac{16}{25}N`],
    ['0.64N', '0.6400 N'],
    [r`\frac{(n-1)!}{k!} \frac{n}{(n-k)!}`, r`\frac{n!}{k!(n-k)!}`], // a factorial identity
  ];
  for (const [gold, pred] of cases) {
    assert.equal(scoreAnswer('olympiadbench', gold, `So the final answer is $\\boxed{${pred}}$.`), true, `${gold} vs ${pred}`);
    assert.equal(mathAnswersEqual(gold, pred), false, `marft's comparison misses ${gold} vs ${pred}`);
  }
  assert.equal(scoreAnswer('olympiadbench', '0.64N', r`\boxed{0.64}`), false, 'a symbol on one side only');
});

test('per-problem tolerance: the `error` field of problem 2592, default 1e-8 otherwise and for Tuple problems', () => {
  const problems = loadDataset('olympiadbench').problems as MathProblem[];
  const p = problems.find((x) => x.id === 'olympiadbench/2592')!;
  assert.deepEqual([p.answer, p.meta['error'], p.meta['unit'], p.benchmark], ['4.2', '1e-1', '%', 'olympiadbench']);
  const info = { error: p.meta['error'] as string, answerType: p.meta['answer_type'] as string };
  assert.equal(olympiadPrecision(info), 0.1);
  assert.equal(scoreAnswer('olympiadbench', p.answer, r`So the final answer is \boxed{4.28}(\%).`, info), true, 'within 0.1 (×1.01)');
  assert.equal(scoreAnswer('olympiadbench', p.answer, r`So the final answer is \boxed{4.35}(\%).`, info), false);
  assert.equal(scoreAnswer('olympiadbench', p.answer, r`So the final answer is \boxed{4.28}`), false, 'the default 1e-8');
  assert.equal(mathAnswersEqual(p.answer, '4.28'), false, "marft's comparison has no per-problem tolerance");
  assert.equal(olympiadPrecision({ error: '1e34,1e-3' }).toString(), [1e34, 1e-3].toString());
  assert.equal(olympiadPrecision({ error: '1e-1', answerType: 'Tuple' }), 1e-8, 'judge.py passes no tolerance for Tuple problems');
  // judge.py puts the model's answer first: the percent scaling is then applied to the answer.
  assert.equal(scoreAnswer('olympiadbench', '0.6', r`\boxed{60}`), true, '0.6 × 100');
  assert.equal(scoreAnswer('olympiadbench', '60', r`\boxed{0.6}`), true, '60 / 100');
});

test('units: the unit goes after the box, as the prompt asks, and is not read; inside the box it is a symbol', () => {
  assert.equal(scoreAnswer('olympiadbench', '45', r`So the final answer is \boxed{45} minutes.`, { unit: 'minute' }), true);
  assert.equal(scoreAnswer('olympiadbench', r`\frac{41}{12}`, r`So the final answer is \boxed{\frac{41}{12}}(km)`, { unit: 'km' }), true);
  assert.equal(scoreAnswer('olympiadbench', '45', r`So the final answer is \boxed{45 \mathrm{~min}}.`, { unit: 'min' }), false, '45min is 45·m·i·n');
  assert.equal(scoreAnswer('olympiadbench', '30', r`\boxed{30^\circ}`), true, '"^\\circ" is removed');
});

test('conventions: answers unordered, tuples ordered; boxes anywhere; the "So the final answer is" sentence', () => {
  assert.equal(scoreAnswer('olympiadbench', '(2,4),(1,3)', r`So the final answer is \boxed{(1,3),(2,4)}`), true, 'the list of tuples in any order');
  assert.equal(scoreAnswer('olympiadbench', '(2,4)', r`\boxed{(4,2)}`), false, 'a tuple in order');
  assert.equal(scoreAnswer('olympiadbench', '1, 3, 5', r`\boxed{5, 3, 1}`), true, 'several answers in any order');
  assert.equal(scoreAnswer('olympiadbench', '1, 3, 5', r`\boxed{1}, \boxed{3} and \boxed{5}`), true, 'every box is joined');
  assert.equal(scoreAnswer('olympiadbench', '1, 3, 5', r`\boxed{1, 3}`), false, 'the counts differ');
  assert.equal(scoreAnswer('olympiadbench', '7', 'So the final answer is $7$.\nThen I checked: 8'), true, 'the answer sentence wins');
  assert.equal(scoreAnswer('olympiadbench', '7', 'I get 7 after all'), false, 'without a box or $..$, the whole text is the answer');
  assert.equal(scoreAnswer('olympiadbench', '7', r`\boxed{7`), false, 'an unclosed box');
});

test('every bundled OlympiadBench answer equals itself boxed (but one, whose answer holds "$"); a changed digit is unequal except within a tolerance', () => {
  const problems = loadDataset('olympiadbench').problems as MathProblem[];
  let same = 0;
  let changedEqual = 0;
  for (const p of problems) {
    const info = { error: (p.meta['error'] as string | undefined) ?? null, answerType: p.meta['answer_type'] as string };
    if (scoreAnswer('olympiadbench', p.answer, `So the final answer is \\boxed{${p.answer}}.`, info)) same++;
    const m = /(\d)(?!.*\d)/s.exec(p.answer);
    if (!m) continue;
    const other = p.answer.slice(0, m.index) + String((Number(m[1]) + 1) % 10) + p.answer.slice(m.index + 1);
    if (scoreAnswer('olympiadbench', p.answer, `So the final answer is \\boxed{${other}}.`, info)) changedEqual++;
  }
  assert.equal(problems.length, 675);
  assert.equal(same, 674);
  assert.equal(changedEqual, 1, '4.2 against 4.3 with tolerance 1e-1');
});
