// DeepScaleR's reward as its training used it. The cases are the authors' own, from
// rllm-org/rllm (formerly agentica-project/deepscaler) tests/rewards/test_math_reward.py, with the
// default RewardConfig (correct 1, everything else 0), plus the example of the module's __main__ in
// agentica-project/deepscaler deepscaler/rewards/math_reward.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scoreAnswer } from '../../../src/verify/math/benchmarks/index.ts';

const r = String.raw;

// [test function, model_response, ground_truth, is_correct]
const AUTHORS_CASES: Array<[string, string, string, boolean]> = [
  ['test_correct_answer_simple', '<think>2 + 2 = 4</think>\nThe answer is \\boxed{4}.', '4', true],
  // test_correct_answer_multiple_ground_truths passes ["0.5", "1/2", "one half"]; any one suffices, the first and second each do.
  ['test_correct_answer_multiple_ground_truths', '<think>The answer could be written as a fraction or decimal</think>\nThe answer is \\boxed{0.5}.', '0.5', true],
  ['test_correct_answer_multiple_ground_truths', '<think>The answer could be written as a fraction or decimal</think>\nThe answer is \\boxed{0.5}.', '1/2', true],
  ['test_incorrect_answer', '<think>2 + 2 = 5</think>\nThe answer is \\boxed{5}.', '4', false],
  ['test_format_error_no_delimiter', 'The answer is 4.', '4', false],
  ['test_format_error_no_boxed_answer', '<think>2 + 2 = 4</think>\nThe answer is 4.', '4', false],
  ['test_complex_mathematical_expression', '<think>Let me solve this quadratic equation</think>\nThe answer is \\boxed{x = 2, x = -3}.', 'x = 2, x = -3', true],
  ['test_answer_with_latex_in_ground_truth', '<think>Let me calculate this carefully</think>\nThe answer is \\boxed{24}.', '\\boxed{24}', true],
  ['test_numerical_tolerance', '<think>The answer is approximately pi</think>\nThe answer is \\boxed{3.14159}.', '3.14159', true],
  ['test_fraction_equivalence', '<think>Let me simplify this fraction</think>\nThe answer is \\boxed{\\frac{1}{2}}.', '1/2', true],
  ['test_custom_config_values', '<think>5 + 5 = 10</think>\nThe answer is \\boxed{10}.', '10', true],
  ['test_custom_config_values', '<think>5 + 5 = 11</think>\nThe answer is \\boxed{11}.', '10', false],
  ['test_custom_config_values', 'The answer is 10.', '10', false],
  // test_empty_ground_truths_are_filtered_out: an empty or blank reference (or a box holding nothing) matches nothing.
  ['test_empty_ground_truths_are_filtered_out', '<think>...</think>\nThe answer is \\boxed{}.', '', false],
  ['test_empty_ground_truths_are_filtered_out', '<think>...</think>\nThe answer is \\boxed{}.', '\\boxed{}', false],
  ['test_empty_ground_truths_are_filtered_out', '<think>...</think>\nThe answer is \\boxed{ }.', ' ', false],
  ['test_empty_ground_truths_are_filtered_out', '<think>...</think>\nThe answer is \\boxed{42}.', '\\boxed', false],
  ['test_empty_ground_truths_do_not_affect_valid_ones', '<think>...</think>\nThe answer is \\boxed{}.', '7', false],
  ['test_empty_ground_truths_do_not_affect_valid_ones', '<think>...</think>\nThe answer is \\boxed{42}.', '7', false],
  ['test_empty_ground_truths_do_not_affect_valid_ones', '<think>...</think>\nThe answer is \\boxed{0}.', '0', true],
  ['test_empty_ground_truths_do_not_affect_valid_ones', '<think>...</think>\nThe answer is \\boxed{0}.', '\\boxed{0}', true],
  ['math_reward.py __main__', '<think> I am omniscient. </think> The answer is \\boxed{24 + 14*x + (-13)*x^2 - 2*x^3 + x^4}.', '$x^{4}-2 x^{3}-13 x^{2}+14 x+24$', true],
];

test("DeepScaleR's reward: the authors' test cases (rllm-org/rllm tests/rewards/test_math_reward.py)", () => {
  for (const [name, response, truth, expected] of AUTHORS_CASES) {
    assert.equal(scoreAnswer('deepscaler', truth, response), expected, `${name}: ${JSON.stringify(response)} against ${JSON.stringify(truth)}`);
  }
});

test('boxed-only extraction: an unboxed right answer scores 0 under DeepScaleR and 1 under marft', () => {
  for (const response of ['The answer is 12.', '<think>...</think> Final answer: 12', '#### 12', r`... $12$`, r`<think>..</think>\fbox{12}`, r`\boxed 12`]) {
    assert.equal(scoreAnswer('deepscaler', '12', response), false, response);
    assert.equal(scoreAnswer(undefined, '12', response), true, response);
  }
  assert.equal(scoreAnswer('deepscaler', '12', r`<think>\boxed{11}</think> so \boxed{12}`), true, 'only the part after </think> counts');
  assert.equal(scoreAnswer('deepscaler', '12', r`<think>\boxed{12}</think> so 12`), false, 'a box inside the thinking does not count');
  assert.equal(scoreAnswer('deepscaler', '12', r`no thinking, \boxed{12}`), true, 'a response without </think> is graded whole');
  assert.equal(scoreAnswer('deepscaler', r`\frac{1}{2}`, r`</think> \boxed{\frac{2}{4}}`), false, "PRM800K's grader: unreduced fractions are wrong");
});
