// Hand-computed values and finite-difference gradient checks for every loss (spec section 4, App. B).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ppoClipLoss } from '../../src/train/losses/ppo-clip.ts';
import { k3KlLoss } from '../../src/train/losses/k3-kl.ts';
import { valueLoss } from '../../src/train/losses/value-loss.ts';
import { policyGradientLoss } from '../../src/train/losses/policy-gradient.ts';
import { mulberry32 } from '../../src/core/rng.ts';

function near(a: number, b: number, tol = 1e-9, what = ''): void {
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);
}

/** Central differences of f at x against the analytic gradient g. */
function gradCheck(f: (x: number[]) => number, x: number[], g: ArrayLike<number>, what: string): void {
  const h = 1e-6;
  for (let i = 0; i < x.length; i++) {
    const plus = [...x];
    const minus = [...x];
    plus[i]! += h;
    minus[i]! -= h;
    const numeric = (f(plus) - f(minus)) / (2 * h);
    near(g[i]!, numeric, 1e-6, `${what} d/dx[${i}]`);
  }
}

const third = [1 / 3, 1 / 3, 1 / 3];

test('PPO-clip: hand-computed loss, gradient and clip fraction', () => {
  const out = ppoClipLoss({ logprobs_N: [-1.0, -0.5, -2.0], proximalLogprobs_N: [-1.1, -0.9, -2.0], advantages_N: [1, 1, -2], weights_N: third, clipLow: 0.2, clipHigh: 0.2 });
  // r = e^0.1 (inside the range), e^0.4 (clipped at 1.2), 1 with A = −2
  near(out.loss, (-Math.exp(0.1) - 1.2 + 2) / 3, 1e-12, 'loss');
  near(out.loss, -0.101723639, 1e-9, 'loss value');
  near(out.dLogprobs_N[0]!, -Math.exp(0.1) / 3, 1e-12, 'grad 0');
  near(out.dLogprobs_N[1]!, 0, 0, 'grad 1 (clipped)');
  near(out.dLogprobs_N[2]!, 2 / 3, 1e-12, 'grad 2');
  near(out.clipFraction, 1 / 3, 1e-12, 'clip fraction');
});

test('decoupled PPO: behaviour importance weights min(pi_prox/pi_behav, 5), hand-computed', () => {
  const out = ppoClipLoss({
    logprobs_N: [-1.0, -0.5, -2.0], proximalLogprobs_N: [-1.1, -0.9, -2.0], behaviourLogprobs_N: [-1.0, -2.9, -2.0],
    advantages_N: [1, 1, -2], weights_N: third, clipLow: 0.2, clipHigh: 0.2, behaviourCap: 5,
  });
  // iw = e^−0.1 (so iw·r = 1), e^2 = 7.39 capped to 5, 1
  near(out.loss, (-1 - 5 * 1.2 + 2) / 3, 1e-12, 'loss');
  near(out.dLogprobs_N[0]!, -1 / 3, 1e-12, 'grad 0');
  near(out.dLogprobs_N[1]!, 0, 0, 'grad 1');
  near(out.dLogprobs_N[2]!, 2 / 3, 1e-12, 'grad 2');
  near(out.cappedFraction, 1 / 3, 1e-12, 'capped');
  near(out.meanImportanceWeight, (Math.exp(-0.1) + 5 + 1) / 3, 1e-12, 'mean iw');
});

test('PPO dual clip c = 3 (AT-GRPO, verl’s clip_ratio_c): a negative advantage’s loss is capped at −c·A, hand-computed', () => {
  // Units: r = e^1.5 = 4.48 with A = −1 (past c: the loss is capped at 3·1 = 3, gradient 0); r = e^0.5
  // = 1.65 with A = −1 (below c: the usual −r·A = 1.65, gradient r·1); r = e^1.5 with A = +1 (the dual
  // clip never applies to a positive advantage: clipped at 1.2 as usual).
  const input = { logprobs_N: [-0.5, -1.5, -0.5], proximalLogprobs_N: [-2, -2, -2], advantages_N: [-1, -1, 1], weights_N: third, clipLow: 0.2, clipHigh: 0.2 };
  const dual = ppoClipLoss({ ...input, dualClip: 3 });
  near(dual.loss, (3 + Math.exp(0.5) - 1.2) / 3, 1e-12, 'loss');
  near(dual.dLogprobs_N[0]!, 0, 0, 'grad 0 (dual-clipped)');
  near(dual.dLogprobs_N[1]!, Math.exp(0.5) / 3, 1e-12, 'grad 1');
  near(dual.dLogprobs_N[2]!, 0, 0, 'grad 2 (clipped)');
  near(dual.clipFraction, 2 / 3, 1e-12, 'clip fraction');
  // Without it the first unit costs −r·A = e^1.5 = 4.48 and keeps its gradient.
  const plain = ppoClipLoss(input);
  near(plain.loss, (Math.exp(1.5) + Math.exp(0.5) - 1.2) / 3, 1e-12, 'loss without the dual clip');
  near(plain.dLogprobs_N[0]!, Math.exp(1.5) / 3, 1e-12, 'grad 0 without the dual clip');
  const rng = mulberry32(5);
  for (let trial = 0; trial < 20; trial++) {
    const prox = Array.from({ length: 6 }, () => -rng() * 3);
    const lp = prox.map((p) => p + (rng() - 0.3) * 3);
    const adv = Array.from({ length: 6 }, () => (rng() - 0.5) * 4);
    const f = (x: number[]) => ppoClipLoss({ logprobs_N: x, proximalLogprobs_N: prox, advantages_N: adv, weights_N: third.concat(third), clipLow: 0.2, clipHigh: 0.2, dualClip: 3 });
    gradCheck((x) => f(x).loss, lp, f(lp).dLogprobs_N, `dual clip trial ${trial}`);
  }
});

test('PPO-clip and decoupled PPO gradients match finite differences (both signs of A, both sides of the clip)', () => {
  const rng = mulberry32(3);
  for (let trial = 0; trial < 30; trial++) {
    const n = 6;
    const prox = Array.from({ length: n }, () => -rng() * 3);
    const lp = prox.map((p) => p + (rng() - 0.5) * 0.9);
    const adv = Array.from({ length: n }, () => (rng() - 0.5) * 4);
    const behav = prox.map((p) => p + (rng() - 0.5) * 4);
    const w = Array.from({ length: n }, () => rng());
    for (const decoupled of [false, true]) {
      const f = (x: number[]) => ppoClipLoss({ logprobs_N: x, proximalLogprobs_N: prox, advantages_N: adv, weights_N: w, clipLow: 0.2, clipHigh: 0.28, behaviourLogprobs_N: decoupled ? behav : undefined, behaviourCap: 5 });
      gradCheck((x) => f(x).loss, lp, f(lp).dLogprobs_N, `ppo trial ${trial} decoupled ${decoupled}`);
    }
  }
});

test('k3 KL: hand-computed value and gradient, zero at the reference, finite differences', () => {
  const out = k3KlLoss({ logprobs_K: [-1, -2], refLogprobs_K: [-1.5, -1], weights_K: [0.5, 0.5], coef: 0.1 });
  near(out.kl, 0.5 * (Math.exp(-0.5) - 0.5) + 0.5 * (Math.E - 2), 1e-12, 'kl');
  near(out.kl, 0.412406244, 1e-9, 'kl value');
  near(out.loss, 0.0412406244, 1e-9, 'loss');
  near(out.dLogprobs_K[0]!, 0.05 * (1 - Math.exp(-0.5)), 1e-12, 'grad 0');
  near(out.dLogprobs_K[1]!, 0.05 * (1 - Math.E), 1e-12, 'grad 1');
  const same = k3KlLoss({ logprobs_K: [-0.3, -4], refLogprobs_K: [-0.3, -4], weights_K: [1, 1], coef: 0.1 });
  assert.equal(same.kl, 0);
  const rng = mulberry32(9);
  const lp = Array.from({ length: 5 }, () => -rng() * 3);
  const ref = Array.from({ length: 5 }, () => -rng() * 3);
  const w = Array.from({ length: 5 }, () => rng());
  const f = (x: number[]) => k3KlLoss({ logprobs_K: x, refLogprobs_K: ref, weights_K: w, coef: 0.37 });
  gradCheck((x) => f(x).loss, lp, f(lp).dLogprobs_K, 'k3');
});

test('clipped value loss, MSE and Huber: hand-computed, gradient zero where the clamp is active', () => {
  const base = { values_N: [1.0, 0.5, 2.0], oldValues_N: [0.7, 0.5, 1.0], returns_N: [0.0, 1.0, 3.0], weights_N: third, clip: 0.2 };
  const mse = valueLoss({ ...base, kind: 'mse' });
  // unit 0: ½·1² > ½·0.9²; unit 1: ½·0.5²; unit 2: clipped ½·1.8² = 1.62 > ½·1²
  near(mse.loss, (0.5 + 0.125 + 1.62) / 3, 1e-12, 'mse');
  near(mse.dValues_N[0]!, 1 / 3, 1e-12, 'mse grad 0');
  near(mse.dValues_N[1]!, -0.5 / 3, 1e-12, 'mse grad 1');
  near(mse.dValues_N[2]!, 0, 0, 'mse grad 2');
  near(mse.clipFraction, 1 / 3, 1e-12, 'clip fraction');
  const huber = valueLoss({ ...base, kind: 'huber', huberDelta: 1 });
  near(huber.loss, (0.5 + 0.125 + 1.3) / 3, 1e-12, 'huber');
  const unclipped = valueLoss({ ...base, clip: 0, kind: 'mse' });
  near(unclipped.loss, (0.5 + 0.125 + 0.5) / 3, 1e-12, 'unclipped');
  near(unclipped.dValues_N[2]!, -1 / 3, 1e-12, 'unclipped grad 2');
});

test('value loss gradients match finite differences (MSE and Huber, clipped and not)', () => {
  const rng = mulberry32(21);
  for (let trial = 0; trial < 30; trial++) {
    const n = 5;
    const old = Array.from({ length: n }, () => rng() * 4 - 2);
    const v = old.map((o) => o + (rng() - 0.5));
    const ret = Array.from({ length: n }, () => rng() * 6 - 3);
    const w = Array.from({ length: n }, () => rng());
    for (const kind of ['mse', 'huber'] as const) {
      for (const clip of [0, 0.2]) {
        const f = (x: number[]) => valueLoss({ values_N: x, oldValues_N: old, returns_N: ret, weights_N: w, kind, clip, huberDelta: 0.7 });
        gradCheck((x) => f(x).loss, v, f(v).dValues_N, `${kind} clip ${clip} trial ${trial}`);
      }
    }
  }
});

test('policy gradient (REINFORCE): hand-computed and finite differences', () => {
  const out = policyGradientLoss({ logprobs_N: [-1, -3], advantages_N: [2, -0.5], weights_N: [0.5, 0.5] });
  near(out.loss, -0.5 * (2 * -1) - 0.5 * (-0.5 * -3), 1e-12, 'loss');
  near(out.loss, 0.25, 1e-12, 'loss value');
  assert.deepEqual(Array.from(out.dLogprobs_N), [-1, 0.25]);
  const f = (x: number[]) => policyGradientLoss({ logprobs_N: x, advantages_N: [2, -0.5], weights_N: [0.5, 0.5] });
  gradCheck((x) => f(x).loss, [-1, -3], out.dLogprobs_N, 'pg');
});
