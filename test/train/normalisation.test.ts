// Batch-level normalisation, group-relative advantages, action normalisation, schedules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseBatch, groupRelativeAdvantages, explainedVariance } from '../../src/core/statistics.ts';
import { actionLogprob, actionScale, spreadActionGrad, wordCount } from '../../src/train/losses/action-normalisation.ts';
import { learningRate, warmupSteps } from '../../src/train/schedules.ts';

function close(actual: ArrayLike<number>, expected: number[], tol = 1e-6): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) <= tol, `[${i}] ${actual[i]} vs ${expected[i]}`);
}

test('batch normalisation whitens over unmasked units and leaves masked ones at 0', () => {
  // mean 2.5, population std √1.25 = 1.1180340
  close(normaliseBatch([1, 2, 3, 4]), [-1.3416408, -0.4472136, 0.4472136, 1.3416408]);
  close(normaliseBatch([1, 100, 3, 2, 4], { mask_N: [1, 0, 1, 1, 1] }), [-1.3416408, 0, 0.4472136, -0.4472136, 1.3416408]);
  close(normaliseBatch([2, 4], { center: false }), [2, 4]);
  close(normaliseBatch([5, 5, 5]), [0, 0, 0]);
});

test('group-relative advantages (GRPO) with and without the std', () => {
  close(groupRelativeAdvantages([1, 0, 1, 1], ['a', 'a', 'b', 'b']), [0.999998, -0.999998, 0, 0]);
  close(groupRelativeAdvantages([1, 0, 0.5, 1], [0, 0, 1, 1], { scaleByStd: false }), [0.5, -0.5, -0.25, 0.25]);
});

test('explained variance', () => {
  assert.equal(explainedVariance([1, 2, 3], [1, 2, 3]), 1);
  close([explainedVariance([2, 2, 2], [1, 2, 3])], [0]);
  close([explainedVariance([1, 2, 4], [1, 2, 3])], [1 - (2 / 9) / (2 / 3)]);
});

test('action normalisation: sum, per token, per word; gradient spreads with the same scale', () => {
  const lp = [-1, -2, -3, -0.5];
  assert.equal(actionLogprob(lp, actionScale('sum', 4, 'a b')), -6.5);
  assert.equal(actionLogprob(lp, actionScale('token', 4, 'a b')), -6.5 / 4);
  assert.equal(actionLogprob(lp, actionScale('word', 4, '  the plan\nis  ')), -6.5 / 3);
  assert.equal(actionLogprob(lp, 1, [1, 0, 1, 0]), -4);
  assert.equal(wordCount(''), 1);
  assert.deepEqual(Array.from(spreadActionGrad(0.5, 0.25, 3, [1, 0, 1])), [0.125, 0, 0.125]);
});

test('schedules: cosine with warmup and final ratio, constant with warmup', () => {
  const cos = { schedule: 'cosine' as const, lr: 1, warmupRatio: 0.1, finalRatio: 0.05 };
  assert.equal(warmupSteps(cos, 21), 2);
  close([0, 1, 2, 11, 20].map((s) => learningRate(cos, s, 21)), [1 / 3, 2 / 3, 1, 0.525, 0.05], 1e-12);
  const constant = { schedule: 'constant' as const, lr: 5e-6, warmupRatio: 0.001, finalRatio: 1 };
  assert.equal(learningRate(constant, 0, 100), 5e-6); // floor(0.1) = 0 warmup steps
  close([0, 1, 2, 1500].map((s) => learningRate(constant, s, 2000)), [5e-6 / 3, 1e-5 / 3, 5e-6, 5e-6], 1e-18); // floor(2) warmup steps
  // App. B actor defaults over 100 steps: no warmup step, base at step 0, base·0.05 at the last step
  const actor = { schedule: 'cosine' as const, lr: 5e-6, warmupRatio: 0.001, finalRatio: 0.05 };
  close([learningRate(actor, 0, 100), learningRate(actor, 99, 100)], [5e-6, 2.5e-7], 1e-18);
});
