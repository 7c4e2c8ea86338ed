// Hand-computed cases and invariance tests for action-level and token-level GAE (spec section 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionLevelGae } from '../../src/train/credit/gae-action.ts';
import { tokenLevelGae, type TokenAction } from '../../src/train/credit/gae-token.ts';
import { mulberry32 } from '../../src/core/rng.ts';

function close(actual: ArrayLike<number>, expected: number[], tol = 1e-9, what = ''): void {
  assert.equal(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i]! - expected[i]!) <= tol, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
}

const rewards_TN = [[0, 1], [0.5, 2]];
const values_TN = [[0.5, 0.6], [0.7, 0.4]];

test('action-level GAE, gamma_agent = 1 (no discount across agents), hand-computed', () => {
  const { advantages_TN, returns_TN } = actionLevelGae({ rewards_TN, values_TN, dones_T: [false, true], gamma: 0.9, lambda: 0.8, gammaAgent: 1 });
  // t=1: A_{1,1} = 2 − 0.4 = 1.6; A_{1,0} = (0.5 + 0.4 − 0.7) + 0.8·1.6 = 1.48
  // t=0: A_{0,1} = (1 + 0.9·0.7 − 0.6) + 0.72·1.48 = 2.0956; A_{0,0} = (0.6 − 0.5) + 0.8·2.0956 = 1.77648
  close(advantages_TN[1]!, [1.48, 1.6]);
  close(advantages_TN[0]!, [1.77648, 2.0956]);
  close(returns_TN[0]!, [2.27648, 2.6956]);
  close(returns_TN[1]!, [2.18, 2.0]);
});

test('action-level GAE, gamma_agent = gamma (reference code), hand-computed', () => {
  const { advantages_TN } = actionLevelGae({ rewards_TN, values_TN, dones_T: [false, true], gamma: 0.9, lambda: 0.8, gammaAgent: 0.9 });
  // t=1: A_{1,0} = (0.5 + 0.9·0.4 − 0.7) + 0.72·1.6 = 1.312; t=0: A_{0,1} = 1.03 + 0.72·1.312 = 1.97464;
  // A_{0,0} = (0.9·0.6 − 0.5) + 0.72·1.97464 = 1.4617408
  close(advantages_TN[1]!, [1.312, 1.6]);
  close(advantages_TN[0]!, [1.4617408, 1.97464]);
});

test('action-level GAE: done stops bootstrap and chain; the episode after an auto-reset keeps its whole chain', () => {
  const { advantages_TN } = actionLevelGae({ rewards_TN: [[1], [0], [2]], values_TN: [[0.5], [0.2], [0.3]], dones_T: [true, false, false], bootstrapValue: 1, gamma: 0.9, lambda: 0.8, gammaAgent: 1 });
  // t=2: 2 + 0.9·1 − 0.3 = 2.6; t=1: (0.9·0.3 − 0.2) + 0.72·2.6 = 1.942 (chain not cut after the reset); t=0 (done): 1 − 0.5 = 0.5
  close(advantages_TN.map((a) => a[0]!), [0.5, 1.942, 2.6]);
  // The same episodes computed apart agree with the concatenated buffer.
  const first = actionLevelGae({ rewards_TN: [[1]], values_TN: [[0.5]], dones_T: [true], bootstrapValue: 123, gamma: 0.9, lambda: 0.8, gammaAgent: 1 });
  const second = actionLevelGae({ rewards_TN: [[0], [2]], values_TN: [[0.2], [0.3]], dones_T: [false, false], bootstrapValue: 1, gamma: 0.9, lambda: 0.8, gammaAgent: 1 });
  close([first.advantages_TN[0]![0]!, ...second.advantages_TN.map((a) => a[0]!)], [0.5, 1.942, 2.6]);
});

test('token-level GAE: gamma_w inside an action, none across the agent boundary, gamma_a across steps (hand-computed)', () => {
  const agent0: TokenAction = { values_K: [0.1, 0.2, 0.3], reward: 0.5 };
  const agent1: TokenAction = { values_K: [0.4, 0.6], reward: 1 };
  const one = tokenLevelGae({ actions_TN: [[agent0, agent1]], dones_T: [true], gammaStep: 0.99, gammaToken: 0.9, gammaAgent: 1, lambda: 0.5 });
  close(one.advantages_TN[0]![1]!, [0.32, 0.4]);
  close(one.advantages_TN[0]![0]!, [0.2654, 0.412, 0.76]);
  close(one.returns_TN[0]![0]!, [0.3654, 0.612, 1.06]);
  const two = tokenLevelGae({ actions_TN: [[agent0, agent1], [{ values_K: [0.8], reward: 2 }]], dones_T: [false, true], gammaStep: 0.99, gammaToken: 0.9, gammaAgent: 1, lambda: 0.5 });
  close(two.advantages_TN[1]![0]!, [1.2]);
  close(two.advantages_TN[0]![1]!, [0.9437, 1.786]);
  close(two.advantages_TN[0]![0]!, [0.328549625, 0.5523325, 1.07185]);
});

test('token-level GAE: masked tokens are skipped, their values never read, their advantages 0', () => {
  const make = (masked: number): TokenAction[][] => [[{ values_K: [0.1, masked, 0.3], mask_K: [1, 0, 1], reward: 0.5 }, { values_K: [0.4, 0.6], reward: 1 }]];
  const a = tokenLevelGae({ actions_TN: make(0.2), dones_T: [true], gammaStep: 0.99, gammaToken: 0.9, gammaAgent: 1, lambda: 0.5 });
  // k=2: 0.5 + 0.4 − 0.3 + 0.5·0.32 = 0.76; k=0 (next unmasked is k=2): 0.9·0.3 − 0.1 + 0.45·0.76 = 0.512
  close(a.advantages_TN[0]![0]!, [0.512, 0, 0.76]);
  const rng = mulberry32(7);
  for (let trial = 0; trial < 20; trial++) {
    const b = tokenLevelGae({ actions_TN: make(rng() * 100 - 50), dones_T: [true], gammaStep: 0.99, gammaToken: 0.9, gammaAgent: 1, lambda: 0.5 });
    close(b.advantages_TN[0]![0]!, [0.512, 0, 0.76], 1e-12);
    close(b.advantages_TN[0]![1]!, Array.from(a.advantages_TN[0]![1]!), 1e-12);
  }
});

function randomEpisode(rng: () => number, maxTokens: number) {
  const T = 1 + Math.floor(rng() * 4);
  const steps: { reward: number; values_K: number[] }[][] = [];
  for (let t = 0; t < T; t++) {
    const n = 1 + Math.floor(rng() * 3);
    steps.push(Array.from({ length: n }, () => ({ reward: rng() * 2 - 1, values_K: Array.from({ length: 1 + Math.floor(rng() * maxTokens) }, () => rng() * 2 - 1) })));
  }
  const dones_T = steps.map((_, t) => t === T - 1 && rng() < 0.5);
  return { steps, dones_T, bootstrapValue: rng() };
}

test('token-level returns equal action-level returns at action boundaries when gamma_w = 1 (lambda = 1, random episodes)', () => {
  const rng = mulberry32(11);
  for (let trial = 0; trial < 50; trial++) {
    const ep = randomEpisode(rng, 6);
    for (const gammaAgent of [1, 0.9]) {
      const act = actionLevelGae({ rewards_TN: ep.steps.map((s) => s.map((a) => a.reward)), values_TN: ep.steps.map((s) => s.map((a) => a.values_K[0]!)), dones_T: ep.dones_T, bootstrapValue: ep.bootstrapValue, gamma: 0.95, lambda: 1, gammaAgent });
      const tok = tokenLevelGae({ actions_TN: ep.steps, dones_T: ep.dones_T, bootstrapValue: ep.bootstrapValue, gammaStep: 0.95, gammaToken: 1, gammaAgent, lambda: 1 });
      ep.steps.forEach((s, t) => s.forEach((_, i) => assert.ok(Math.abs(tok.returns_TN[t]![i]![0]! - act.returns_TN[t]![i]!) < 1e-9, `trial ${trial} t ${t} i ${i}`)));
    }
  }
});

test('token-level GAE with one-token actions equals action-level GAE for any lambda', () => {
  const rng = mulberry32(5);
  for (let trial = 0; trial < 50; trial++) {
    const ep = randomEpisode(rng, 1);
    const act = actionLevelGae({ rewards_TN: ep.steps.map((s) => s.map((a) => a.reward)), values_TN: ep.steps.map((s) => s.map((a) => a.values_K[0]!)), dones_T: ep.dones_T, bootstrapValue: ep.bootstrapValue, gamma: 0.9, lambda: 0.7, gammaAgent: 1 });
    const tok = tokenLevelGae({ actions_TN: ep.steps, dones_T: ep.dones_T, bootstrapValue: ep.bootstrapValue, gammaStep: 0.9, gammaToken: 0.5, gammaAgent: 1, lambda: 0.7 });
    ep.steps.forEach((s, t) => s.forEach((_, i) => assert.ok(Math.abs(tok.advantages_TN[t]![i]![0]! - act.advantages_TN[t]![i]!) < 1e-9)));
  }
});
