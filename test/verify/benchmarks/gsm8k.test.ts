// GSM8K's scorer: openai/grade-school-math grade_school_math/dataset.py (extract_answer with the
// pattern "#### (\-?[0-9\.\,]+)", commas removed; is_correct compares with the reference's).
// The labelled model solutions are the authors' own examples, from
// grade_school_math/data/example_model_solutions.jsonl: those solutions end "A: N" rather than
// "#### N", so they exercise the last-number reading, and its verdicts reproduce the authors'
// is_correct labels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';
import { mathAnswersEqual } from '../../../src/verify/math/index.ts';

// [ground_truth's final line, model solution's final line(s), is_correct] from example_model_solutions.jsonl.
const LABELLED: Array<[string, string, boolean]> = [
  ['A: 18', 'She has 13 ducks eggs and she sells 2 each day so she makes 13 * 2 = $<<13*2=26>>26\nA: 26', false],
  ['A: 18', 'She sells her eggs for $2 per egg and has 9 available for sale so 2 * 9 = $<<2*9=18>>18 per day\nA: 18', true],
  ['A: 3', 'So it takes 2 + 1 = <<2+1=3>>3.0 bolts of blue and white fiber altogether.\nA: 3', true],
  ['A: 3', 'So it takes a total of 200+50 = <<200+50=250>>250 meters of fiber\nA: 250', false],
  ['A: 70000', 'This means he made a profit of 130,000-40,000=$<<130000-40000=90000>>90,000\nA: 90,000', false],
  ['A: 540', 'So he runs 9*60=<<9*60=540>>540 meters per week\nA: 540', true],
  ['A: 20', 'To finish off the chickens\' meal of the day, Wendi needs to give them a final meal containing 266.6666666666667 cups of feed.\nA: 266', false],
  ['A: 64', 'For the thirteenth glass Kylar needs to pay 5 * 1', false],
  ['A: 260', 'Together, they have 160+80+20=<<160+80+20=260>>260 sheep\nA: 260', true],
];

test("GSM8K: the authors' labelled model solutions (example_model_solutions.jsonl)", () => {
  for (const [truth, solution, label] of LABELLED) assert.equal(scoreAnswer('gsm8k', truth, solution), label, `${solution} against ${truth}`);
});

test('GSM8K: the "#### N" answer first, commas removed, exact numbers; the last number without one', () => {
  const first = JSON.parse(readFileSync(new URL('../../../data/gsm8k/test.jsonl', import.meta.url), 'utf8').split('\n')[0]!) as { answer: string };
  assert.match(first.answer, /#### 18$/);
  assert.equal(scoreAnswer('gsm8k', first.answer, 'She makes 9 * 2 = 18 dollars.\n#### 18'), true, 'the reference is its worked solution');
  assert.equal(scoreAnswer('gsm8k', '18', '#### 18 and then 19'), true, 'the number right after "#### "');
  assert.equal(scoreAnswer('gsm8k', '1800', '#### 1,800'), true, 'commas removed');
  assert.equal(scoreAnswer('gsm8k', '18', '#### 18.00'), true, 'the same decimal value');
  assert.equal(scoreAnswer('gsm8k', '18', 'I think 18 ... no, 19. #### 17'), false, 'the marker wins over later numbers');
  assert.equal(scoreAnswer('gsm8k', '18', 'so it is 18.0001'), false, 'no tolerance');
  assert.equal(scoreAnswer('gsm8k', '18', 'earn 18 dollars in 2 days'), false, 'the last number, whatever it is');
  assert.equal(mathAnswersEqual('18', 'earn 18 dollars in 2 days'), false);
  assert.equal(scoreAnswer('gsm8k', '18', String.raw`\boxed{\frac{36}{2}}`), false, 'no expressions: the last number is 2');
  assert.equal(mathAnswersEqual('18', String.raw`\boxed{\frac{36}{2}}`), true, "marft's comparison evaluates the box");
  assert.equal(scoreAnswer('gsm8k', '-3', 'it drops by #### -3'), true);
  assert.equal(scoreAnswer('gsm8k', '5', 'no number here'), false);
});
