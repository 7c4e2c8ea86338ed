// The three per-token advantages of MAS-OPD on a hand-computed case, and the Eq. 13 objective's
// averaging order (tokens, then a role's turns, then roles) and its off-policy form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { opdAdvantages } from '../../src/opd/advantages.ts';
import { unitWeights } from '../../src/train/losses/aggregation.ts';
import { importanceWeightedPgLoss } from '../../src/train/losses/importance-weighted-pg.ts';
import type { TrainAction } from '../../src/train/types.ts';

const close = (a: ArrayLike<number>, b: number[], eps = 1e-12) => {
  assert.equal(a.length, b.length);
  b.forEach((x, k) => assert.ok(Math.abs(a[k]! - x) < eps, `index ${k}: ${a[k]} vs ${x}`));
};

test('A_OPD = ℓ_T(u, r_i) − log π_student, A_role = ℓ_T(u, r_i) − ℓ_T(u, κ(r_i)), A = A_OPD + λ·A_role', () => {
  const teacher = [-1, -2, -0.25];
  const contrast = [-3, -2.5, -0.25];
  const student = [-0.5, -1, -2];
  const a = opdAdvantages(teacher, contrast, student, 0.1);
  close(a.opd, [-0.5, -1, 1.75]);
  close(a.role, [2, 0.5, 0]);
  close(a.total, [-0.5 + 0.2, -1 + 0.05, 1.75]);
  // λ = 0 (no RAS): no contrasting pass, A = A_OPD.
  const plain = opdAdvantages(teacher, null, student, 0);
  close(plain.role, [0, 0, 0]);
  close(plain.total, [-0.5, -1, 1.75]);
  assert.throws(() => opdAdvantages([-1], null, [-1, -2], 0), /teacher scored 1 tokens, the response has 2/);
});

/** The units of a role-turn-token-mean minibatch, as the update sees them (role and length are all the weights read). */
const turn = (role: string, length: number) => ({ role, length }) as unknown as TrainAction;

/** MAS-OPD's objective on one minibatch: the pipeline's weights (role-turn-token-mean) and importance-weighted policy gradient. */
function objective(units: { role: string; advantages: number[]; logprobs: number[]; behaviour?: number[] }[], onPolicy: boolean) {
  const turns = units.map((u) => turn(u.role, u.advantages.length));
  const weight = unitWeights(turns, turns, 'token', 'role-turn-token-mean');
  const flat = (f: (u: (typeof units)[number], k: number) => number) => units.flatMap((u) => u.advantages.map((_, k) => f(u, k)));
  const r = importanceWeightedPgLoss({
    logprobs_N: flat((u, k) => u.logprobs[k]!), behaviourLogprobs_N: flat((u, k) => (u.behaviour ?? u.logprobs)[k]!),
    advantages_N: flat((u, k) => u.advantages[k]!), weights_N: units.flatMap((u, i) => u.advantages.map(() => weight(turns[i]!))), cap: Infinity, onPolicy,
  });
  let n = 0;
  return { ...r, dLogprobs: units.map((u) => u.advantages.map(() => r.dLogprobs_N[n++]!)) };
}

test('objective: a role with one long and one short turn weighs them equally; each role counts once', () => {
  // Role R: a 4-token turn and a 1-token turn; role S: one 2-token turn. R = 2 roles.
  const units = [
    { role: 'R', advantages: [1, 1, 1, 1], logprobs: [-1, -1, -1, -1] },
    { role: 'R', advantages: [2], logprobs: [-2] },
    { role: 'S', advantages: [4, -4], logprobs: [-0.5, -1] },
  ];
  const r = objective(units, true);
  // Per-token weights 1/(roles · turns of the role · tokens of the turn): R long 1/16, R short 1/4, S 1/4.
  close(r.dLogprobs[0]!, [-1 / 16, -1 / 16, -1 / 16, -1 / 16]);
  close(r.dLogprobs[1]!, [-2 / 4]);
  close(r.dLogprobs[2]!, [-4 / 4, 4 / 4]);
  // L = −½[½(mean(A·lp) of the long turn + of the short turn) + mean over S's turn]
  //   = −½[½(−1 + −4) + ½(−2 + 4)] = −½[−2.5 + 1] = 0.75
  assert.ok(Math.abs(r.loss - 0.75) < 1e-12, `loss ${r.loss}`);
  // The long turn's total weight equals the short turn's: 4 · 1/16 = 1/4.
  const sum = (xs: ArrayLike<number>) => Array.from(xs).reduce((s, x) => s + x, 0);
  assert.ok(Math.abs(sum(r.dLogprobs[0]!) / 1 - r.dLogprobs[1]![0]! / 2) < 1e-12);
});

test('objective, later minibatches: the gradient is −w·A·π_θ/π_behaviour', () => {
  const lp = [Math.log(0.5), Math.log(0.2)];
  const behaviour = [Math.log(0.25), Math.log(0.2)];
  const r = objective([{ role: 'R', advantages: [1, -3], logprobs: lp, behaviour }], false);
  // w = 1/(1 role · 1 turn · 2 tokens) = ½; the ratios are 0.5/0.25 = 2 and 1.
  close(r.dLogprobs[0]!, [-0.5 * 1 * 2, -0.5 * -3 * 1], 1e-12);
  // The loss holds the ratio constant: −Σ w·c·A·log π.
  assert.ok(Math.abs(r.loss - -0.5 * (2 * 1 * lp[0]! + 1 * -3 * lp[1]!)) < 1e-12);
  // The weighted mean ratio: (½·2 + ½·1) / 1.
  assert.ok(Math.abs(r.meanImportanceWeight - 1.5) < 1e-12);
  // On the first pass (the policy that sampled) every ratio is 1 whatever the recomputed log-probs say.
  close(objective([{ role: 'R', advantages: [1, -3], logprobs: lp, behaviour }], true).dLogprobs[0]!, [-0.5 * 1, -0.5 * -3], 1e-12);
});
