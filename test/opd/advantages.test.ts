// The three per-token advantages of MAS-OPD on a hand-computed case, and the Eq. 13 objective's
// averaging order (tokens, then a role's turns within each trajectory, then the trajectories, then
// roles; or with the turns pooled over the minibatch) and its off-policy form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
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

test('Eq. 13 per trajectory (the default): a role’s 4-turn and 1-turn trajectories weigh ½ each; pooled, ⅘ and ⅕', () => {
  // Role R acts 4 times in episode 0 (turns of 1, 2, 1, 1 tokens) and once in episode 1 (3 tokens);
  // role S once in each episode (2 tokens). R = 2 roles.
  const unit = (role: string, length: number, episode: number) => ({ role, length, episode }) as unknown as TrainAction;
  const units = [unit('R', 1, 0), unit('R', 2, 0), unit('R', 1, 0), unit('R', 1, 0), unit('S', 2, 0), unit('R', 3, 1), unit('S', 2, 1)];
  const perTrajectory = unitWeights(units, units, 'token', 'role-trajectory-turn-token-mean');
  // w = 1/(R · |E_r| · N_{r,e} · L): R's turns of episode 0: 1/(2·2·4·L); R's turn of episode 1: 1/(2·2·1·3); S: 1/(2·2·1·2).
  close(units.map(perTrajectory), [1 / 16, 1 / 32, 1 / 16, 1 / 16, 1 / 8, 1 / 12, 1 / 8]);
  // The total weight of each (role, trajectory): tokens × weight, summed over its turns.
  const total = (w: (a: TrainAction) => number, pick: (a: TrainAction) => boolean) => units.filter(pick).reduce((s, a) => s + a.length * w(a), 0);
  const inEpisode = (role: string, e: number) => (a: TrainAction) => a.role === role && a.episode === e;
  close([total(perTrajectory, inEpisode('R', 0)), total(perTrajectory, inEpisode('R', 1)), total(perTrajectory, inEpisode('S', 0))], [0.25, 0.25, 0.25]);
  // Pooled (opd.turnWeighting: pooled): w = 1/(R · N_r · L) with N_R = 5 turns, so episode 0 holds 4/5
  // of R's weight (0.8 · ½ = 0.4) and episode 1 1/5 (0.1).
  const pooled = unitWeights(units, units, 'token', 'role-turn-token-mean');
  close(units.map(pooled), [1 / 10, 1 / 20, 1 / 10, 1 / 10, 1 / 8, 1 / 30, 1 / 8]);
  close([total(pooled, inEpisode('R', 0)), total(pooled, inEpisode('R', 1)), total(pooled, inEpisode('S', 0))], [0.4, 0.1, 0.25]);
});

test('mas-opd plans Eq. 13 per trajectory by default, pooled with opd.turnWeighting: pooled', () => {
  const plan = (turnWeighting?: string) => ALGORITHM_REGISTRY['mas-opd'].plan(['a'], parseConfig({ task: { name: 'workflow' }, algorithm: 'mas-opd', ...(turnWeighting ? { opd: { turnWeighting } } : {}) }));
  assert.equal(plan().aggregation, 'role-trajectory-turn-token-mean');
  assert.equal(plan('pooled').aggregation, 'role-turn-token-mean');
  assert.equal(plan().policyLoss, 'importance-weighted-pg');
});
