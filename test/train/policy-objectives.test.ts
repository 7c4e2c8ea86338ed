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
