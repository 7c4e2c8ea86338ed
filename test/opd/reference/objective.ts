// A frozen copy of the MAS-OPD step as it was before MAS-OPD joined the training pipeline (src/opd/ at
// commit eed69ee): the differential oracle of test/opd/pipeline-equality.test.ts, which checks that the
// pipeline (src/train/loop.ts with the mas-opd plan) gives the same adapters. Not used by src/.
// The MAS-OPD objective (spec section 5; MAS-OPD paper Eq. 13):
//   L = − mean over roles i  of  mean over the responses (turns) of role i  of
//         mean over the response's tokens k  of  sg(A_k) · log π_θi(y_k | x, y_<k)
// Unweighted means at every level, so a role with one long and one short turn weighs the two turns
// equally, and each role counts once whatever its number of turns. No reward, group, critic,
// clipping or KL. The loss is a function of per-token log-probs only; its gradient with respect to
// them goes to engine.backward, so each role's gradient reaches only the adapter that scored it.
//
// Off-policy minibatches: when a batch is split into several minibatches, the policy has moved by
// the time the second one is used, so its term becomes sg(A_k) · π_θ(y_k) / π_behaviour(y_k)
// (the importance ratio against the rollout's log-probs); its gradient with respect to log π_θ is
// sg(A_k) · ratio_k, which equals the on-policy gradient where θ is the behaviour policy.

export interface ObjectiveUnit {
  role: string;
  /** sg(A_k), one per response token. */
  advantages: ArrayLike<number>;
  /** log π_θ(y_k) under the current parameters. */
  logprobs: ArrayLike<number>;
  /** The rollout's log-probs; required when importanceRatio is set. */
  behaviour?: ArrayLike<number>;
}

export interface ObjectiveResult {
  loss: number;
  /** dL/dlog π_θ(y_k), aligned with each unit's tokens. */
  dLogprobs: Float64Array[];
  /** Mean importance ratio over the tokens (1 without importanceRatio). */
  meanRatio: number;
}

/** How many roles, and responses per role, the means run over (a whole minibatch, of which `units` may be a part). */
export interface Normaliser {
  roles: number;
  perRole: ReadonlyMap<string, number>;
}

export function normaliserOf(units: readonly Pick<ObjectiveUnit, 'role' | 'advantages'>[]): Normaliser {
  const perRole = new Map<string, number>();
  for (const u of units) if (u.advantages.length > 0) perRole.set(u.role, (perRole.get(u.role) ?? 0) + 1);
  return { roles: perRole.size, perRole };
}

export function opdObjective(units: readonly ObjectiveUnit[], options: { importanceRatio: boolean; normaliser?: Normaliser }): ObjectiveResult {
  const { roles, perRole } = options.normaliser ?? normaliserOf(units);
  let loss = 0;
  let ratioSum = 0;
  let tokens = 0;
  const dLogprobs = units.map((u) => {
    const n = u.advantages.length;
    const d = new Float64Array(n);
    if (n === 0) return d;
    if (u.logprobs.length !== n) throw new Error(`role ${u.role}: ${u.logprobs.length} log-probs for ${n} advantages`);
    const count = perRole.get(u.role);
    if (!count) throw new Error(`role ${u.role} is missing from the normaliser`);
    const w = 1 / (roles * count * n);
    for (let k = 0; k < n; k++) {
      let ratio = 1;
      if (options.importanceRatio) {
        if (!u.behaviour) throw new Error('the importance ratio needs the behaviour log-probs');
        ratio = Math.exp(u.logprobs[k]! - u.behaviour[k]!);
        loss -= w * u.advantages[k]! * ratio;
      } else {
        loss -= w * u.advantages[k]! * u.logprobs[k]!;
      }
      d[k] = -w * u.advantages[k]! * ratio;
      ratioSum += ratio;
      tokens++;
    }
    return d;
  });
  return { loss, dLogprobs, meanRatio: tokens > 0 ? ratioSum / tokens : 1 };
}
