// The unbiased pass@k estimator and spec section 7's seed aggregation, on numbers worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateOverSeeds, meanPassAtK, passAtK, passAtKCurve } from '../../src/core/pass-at-k.ts';

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-12, `${what}: ${actual} != ${expected}`);
}

test('pass@k = 1 − C(n−c, k)/C(n, k), by hand', () => {
  // n = 5, c = 2, k = 1: C(3,1)/C(5,1) = 3/5, so pass@1 = 2/5 = c/n.
  close(passAtK(5, 2, 1), 0.4, 'n=5 c=2 k=1');
  // k = 2: C(3,2)/C(5,2) = 3/10, so pass@2 = 7/10.
  close(passAtK(5, 2, 2), 0.7, 'n=5 c=2 k=2');
  // k = 3: C(3,3)/C(5,3) = 1/10, so pass@3 = 9/10.
  close(passAtK(5, 2, 3), 0.9, 'n=5 c=2 k=3');
  // k = 4 > n − c = 3: every draw of 4 holds a correct one.
  assert.equal(passAtK(5, 2, 4), 1);
  assert.deepEqual(passAtKCurve(5, 2).map((x) => Math.round(x * 1e12) / 1e12), [0.4, 0.7, 0.9, 1, 1]);
  // n = 10, c = 3, k = 5: C(7,5)/C(10,5) = 21/252 = 1/12, so pass@5 = 11/12.
  close(passAtK(10, 3, 5), 11 / 12, 'n=10 c=3 k=5');
  // No correct sample: 0 for every k; all correct: 1.
  assert.deepEqual(passAtKCurve(4, 0), [0, 0, 0, 0]);
  assert.deepEqual(passAtKCurve(3, 3), [1, 1, 1]);
});

test('the product form stays exact where the binomials overflow', () => {
  // n = 2000, c = 1, k = 1000: C(1999,1000)/C(2000,1000) = 1000/2000, so pass@k = 1/2 (C(2000,1000) ≈ 2e600).
  close(passAtK(2000, 1, 1000), 0.5, 'n=2000 c=1 k=1000');
  // n = 1000, c = 1, any k: pass@k = k/n.
  for (const k of [1, 7, 500, 999]) close(passAtK(1000, 1, k), k / 1000, `n=1000 c=1 k=${k}`);
  // pass@1 is always c/n.
  for (const [n, c] of [[16, 5], [300, 123], [64, 63]] as const) close(passAtK(n, c, 1), c / n, `pass@1 n=${n} c=${c}`);
});

test('mean pass@k over problems; bad arguments are one-line errors', () => {
  // Problems (n=5,c=2) and (n=4,c=0) at k=2: (0.7 + 0) / 2 = 0.35.
  close(meanPassAtK([{ n: 5, c: 2 }, { n: 4, c: 0 }], 2), 0.35, 'mean');
  assert.throws(() => passAtK(5, 6, 1), /c \(6\) cannot exceed n \(5\)/);
  assert.throws(() => passAtK(5, 2, 6), /k must be in \[1, n\] = \[1, 5\], got 6/);
  assert.throws(() => passAtK(5, 2, 0), /k must be in/);
  assert.throws(() => passAtK(5.5, 2, 1), /n must be a non-negative integer/);
  assert.throws(() => meanPassAtK([], 1), /no problems/);
});

test('seed aggregation (spec section 7): per seed the mean over problems, per run the mean over seeds, sample std over runs', () => {
  const scores = [
    // run 0: seed means (1+0+1)/3 = 2/3 and (1+1+1)/3 = 1; run mean (2/3 + 1)/2 = 5/6.
    [
      [1, 0, 1],
      [1, 1, 1],
    ],
    // run 1: seed means 0/3 = 0 and 2/3; run mean 1/3.
    [
      [0, 0, 0],
      [1, 0, 1],
    ],
    // run 2: seed means 1/3 and 1/3; run mean 1/3.
    [
      [0, 1, 0],
      [0, 0, 1],
    ],
  ];
  const a = aggregateOverSeeds(scores);
  close(a.seedMeans[0]![0]!, 2 / 3, 'run 0 seed 0');
  close(a.runMeans[0]!, 5 / 6, 'run 0');
  close(a.runMeans[1]!, 1 / 3, 'run 1');
  close(a.runMeans[2]!, 1 / 3, 'run 2');
  // mean = (5/6 + 1/3 + 1/3) / 3 = (3/2) / 3 = 1/2.
  close(a.mean, 0.5, 'mean');
  // deviations 1/3, −1/6, −1/6: squares 1/9 + 1/36 + 1/36 = 1/6; over n − 1 = 2: 1/12; std = sqrt(1/12).
  close(a.std!, Math.sqrt(1 / 12), 'std');
  assert.equal(a.runs, 3);
  // One run: no standard deviation; its mean is the mean of its seed means.
  const one = aggregateOverSeeds([[[1, 0], [0, 0]]]);
  close(one.mean, 0.25, 'one run');
  assert.equal(one.std, null);
  assert.throws(() => aggregateOverSeeds([]), /no training runs/);
  assert.throws(() => aggregateOverSeeds([[]]), /run 0 has no decoding seeds/);
  assert.throws(() => aggregateOverSeeds([[[1], []]]), /run 0, seed 1: nothing to average/);
  assert.throws(() => aggregateOverSeeds([[[NaN]]]), /not a finite score/);
});
