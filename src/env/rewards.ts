// Rewards (spec section 3): team rewards and the role-local rewards of the RL baselines.
//
//   team, maths   1 if the final answer equals the reference, else 0 (sparse)
//   team, code    fraction of golden tests passed (dense)
//   Reasoner      0.2·format + 0.8·correct
//   Tool-User     0.1·runs + 0.1·parsable + 0.8·correct
//   Coder         0.1·builds + 0.1·runs + 0.8·pass fraction
//   Tester        0.2·valid + 0.8·(fraction of its test inputs whose declared output the reference
//                 solution reproduces)
//
// The weights are configurable; every component is in [0, 1], so every local reward is too when the
// weights of a role sum to 1.

export interface RoleRewardWeights {
  reasoner: { format: number; correct: number };
  toolUser: { runs: number; parsable: number; correct: number };
  coder: { builds: number; runs: number; passFraction: number };
  tester: { valid: number; reproduced: number };
}

export const DEFAULT_ROLE_REWARD_WEIGHTS: RoleRewardWeights = {
  reasoner: { format: 0.2, correct: 0.8 },
  toolUser: { runs: 0.1, parsable: 0.1, correct: 0.8 },
  coder: { builds: 0.1, runs: 0.1, passFraction: 0.8 },
  tester: { valid: 0.2, reproduced: 0.8 },
};

/** Overrides some weights of the defaults, e.g. { reasoner: { format: 0 } }. */
export function roleRewardWeights(overrides: { [R in keyof RoleRewardWeights]?: Partial<RoleRewardWeights[R]> } = {}): RoleRewardWeights {
  return {
    reasoner: { ...DEFAULT_ROLE_REWARD_WEIGHTS.reasoner, ...overrides.reasoner },
    toolUser: { ...DEFAULT_ROLE_REWARD_WEIGHTS.toolUser, ...overrides.toolUser },
    coder: { ...DEFAULT_ROLE_REWARD_WEIGHTS.coder, ...overrides.coder },
    tester: { ...DEFAULT_ROLE_REWARD_WEIGHTS.tester, ...overrides.tester },
  };
}

const bit = (b: boolean): number => (b ? 1 : 0);

export function reasonerReward(w: RoleRewardWeights, parts: { format: boolean; correct: boolean }): number {
  return w.reasoner.format * bit(parts.format) + w.reasoner.correct * bit(parts.correct);
}

export function toolUserReward(w: RoleRewardWeights, parts: { runs: boolean; parsable: boolean; correct: boolean }): number {
  return w.toolUser.runs * bit(parts.runs) + w.toolUser.parsable * bit(parts.parsable) + w.toolUser.correct * bit(parts.correct);
}

export function coderReward(w: RoleRewardWeights, parts: { builds: boolean; runs: boolean; passFraction: number }): number {
  return w.coder.builds * bit(parts.builds) + w.coder.runs * bit(parts.runs) + w.coder.passFraction * parts.passFraction;
}

export function testerReward(w: RoleRewardWeights, parts: { valid: boolean; reproducedFraction: number }): number {
  return w.tester.valid * bit(parts.valid) + w.tester.reproduced * parts.reproducedFraction;
}
