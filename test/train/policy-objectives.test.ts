// The policy objectives by name (src/train/losses/policy-objectives.ts), by hand-computed cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.ts';
import { POLICY_LOSSES } from '../../src/train/losses/policy-objectives.ts';

const actor = parseConfig({ actor: { behaviourCap: 2 } }).actor;

test('policy-gradient: −Σ w·A·log π; importance-weighted: each unit weighted by min(π/μ, cap), equal to it on-policy', () => {
  const input = { logprobs_N: [-1, -2, Math.log(0.5)], proximalLogprobs_N: [0, 0, 0], behaviourLogprobs_N: [-1, -2 - Math.log(3), Math.log(0.25)], advantages_N: [1, -1, 2], weights_N: [0.5, 0.5, 0], actor, samplerSeparate: false };
  const pg = POLICY_LOSSES['policy-gradient'].loss(input);
  assert.equal(pg.loss, -(0.5 * 1 * -1 + 0.5 * -1 * -2));
  assert.deepEqual(Array.from(pg.dLogprobs_N), [-0.5, 0.5, 0]);
  // Ratios π/μ: 1, 3 (capped at 2), 2 (weight 0: ignored).
  const iw = POLICY_LOSSES['importance-weighted-pg'].loss(input);
  assert.deepEqual(Array.from(iw.dLogprobs_N), [-0.5, 0.5 * 2, 0]);
  assert.equal(iw.cappedFraction, 0.5);
  assert.equal(iw.meanImportanceWeight, 1.5);
  const onPolicy = POLICY_LOSSES['importance-weighted-pg'].loss({ ...input, behaviourLogprobs_N: input.logprobs_N });
  assert.deepEqual(Array.from(onPolicy.dLogprobs_N), Array.from(pg.dLogprobs_N));
  assert.equal(onPolicy.loss, pg.loss);
  assert.equal(POLICY_LOSSES['policy-gradient'].needsProximal(false), false);
  assert.equal(POLICY_LOSSES['policy-gradient'].needsProximal(true), true);
  assert.equal(POLICY_LOSSES['ppo-clip'].needsProximal(false), true);
});

test('MAS-OPD’s later minibatches: the ratio to the sampler is truncated at actor.behaviourCap (the paper names no correction), hand-computed', () => {
  // The pipeline gives MAS-OPD importance-weighted-pg: c = 1 on the step's first minibatch (onPolicy),
  // min(π/μ, cap) after it. With cap 5 (the default), ratios e^0.2, e^−0.3 and e^2 = 7.39 → capped at 5.
  const cap5 = parseConfig({}).actor;
  const input = { logprobs_N: [-1, -1, -1], proximalLogprobs_N: [0, 0, 0], behaviourLogprobs_N: [-1.2, -0.7, -3], advantages_N: [0.5, -2, 1], weights_N: [0.25, 0.25, 0.5], actor: cap5, samplerSeparate: false };
  const later = POLICY_LOSSES['importance-weighted-pg'].loss({ ...input, onPolicy: false });
  const expected = [-0.25 * Math.exp(0.2) * 0.5, -0.25 * Math.exp(-0.3) * -2, -0.5 * 5 * 1];
  later.dLogprobs_N.forEach((d, i) => assert.ok(Math.abs(d - expected[i]!) < 1e-12, `[${i}] ${d} vs ${expected[i]}`));
  assert.ok(Math.abs(later.loss - expected.reduce((s, d) => s + d * -1, 0)) < 1e-12);
  assert.equal(later.cappedFraction, 0.5);
  // The first minibatch: every ratio 1, whatever the log-probs say.
  const first = POLICY_LOSSES['importance-weighted-pg'].loss({ ...input, onPolicy: true });
  assert.deepEqual(Array.from(first.dLogprobs_N), [-0.25 * 0.5, -0.25 * -2, -0.5 * 1]);
  assert.deepEqual([first.cappedFraction, first.meanImportanceWeight], [0, 1]);
});

test('ppo-clip passes the plan’s dual clip through (AT-GRPO: 3), and none without one', () => {
  const input = { logprobs_N: [-0.5], proximalLogprobs_N: [-2], behaviourLogprobs_N: [-2], advantages_N: [-1], weights_N: [1], actor: parseConfig({}).actor, samplerSeparate: false };
  assert.equal(POLICY_LOSSES['ppo-clip'].loss({ ...input, dualClip: 3 }).loss, 3);
  assert.equal(POLICY_LOSSES['ppo-clip'].loss(input).loss, Math.exp(1.5));
});
