// Batch-level normalisation of rewards and advantages (App. B: "rewards and advantages are
// normalized at batch level"), and group-relative advantages (GRPO, spec section 6).
//
// Statistics are population statistics over the units with a non-zero mask; masked units are
// left at 0. x' = (x − mean) / (std + eps) (or x / (std + eps) when centring is off).

export const NORMALISATION_EPS = 1e-8;

export interface Moments {
  mean: number;
  std: number;
  count: number;
}

export function moments(x_N: ArrayLike<number>, mask_N?: ArrayLike<number>): Moments {
  let count = 0;
  let sum = 0;
  for (let i = 0; i < x_N.length; i++) if (!mask_N || mask_N[i] !== 0) { sum += x_N[i]!; count++; }
  if (count === 0) return { mean: 0, std: 0, count: 0 };
  const mean = sum / count;
  let sq = 0;
  for (let i = 0; i < x_N.length; i++) if (!mask_N || mask_N[i] !== 0) sq += (x_N[i]! - mean) ** 2;
  return { mean, std: Math.sqrt(sq / count), count };
}

/** Whiten x over its unmasked entries. `center` = false only divides by the std (keeps the sign of the mean). */
export function normaliseBatch(x_N: ArrayLike<number>, options: { mask_N?: ArrayLike<number>; center?: boolean; eps?: number } = {}): Float64Array {
  const { mask_N, center = true, eps = NORMALISATION_EPS } = options;
  const { mean, std } = moments(x_N, mask_N);
  const out = new Float64Array(x_N.length);
  for (let i = 0; i < x_N.length; i++) {
    if (mask_N && mask_N[i] === 0) continue;
    out[i] = ((center ? x_N[i]! - mean : x_N[i]!) / (std + eps));
  }
  return out;
}

/**
 * GRPO advantages: A_i = (r_i − mean_g) / (std_g + eps) over the members of i's group g
 * (groupIds_N[i]); with scaleByStd = false, A_i = r_i − mean_g (Dr. GRPO / MAGRPO). std_g is the
 * population deviation (divisor n: CURE's np.std) or, with deviation 'unbiased', the sample one
 * (divisor n − 1: torch.std, as verl and TRL compute it; AT-GRPO's trainer); a group of one has no
 * spread either way and gets 0.
 */
export function groupRelativeAdvantages(rewards_N: ArrayLike<number>, groupIds_N: ArrayLike<string | number>, options: { scaleByStd?: boolean; eps?: number; deviation?: GroupDeviation } = {}): Float64Array {
  const { scaleByStd = true, eps = 1e-6, deviation = 'population' } = options;
  const members = new Map<string | number, number[]>();
  for (let i = 0; i < rewards_N.length; i++) {
    const g = groupIds_N[i]!;
    let list = members.get(g);
    if (!list) members.set(g, (list = []));
    list.push(i);
  }
  const out = new Float64Array(rewards_N.length);
  for (const idx of members.values()) {
    // A group whose rewards are all equal carries no signal: exactly 0, not the last-bit error of
    // its floating-point mean divided by eps.
    if (idx.every((i) => rewards_N[i] === rewards_N[idx[0]!])) continue;
    const { mean, std: population } = moments(idx.map((i) => rewards_N[i]!));
    const n = idx.length;
    const std = deviation === 'unbiased' ? population * Math.sqrt(n / (n - 1)) : population;
    for (const i of idx) out[i] = scaleByStd ? (rewards_N[i]! - mean) / (std + eps) : rewards_N[i]! - mean;
  }
  return out;
}

/** Which standard deviation a group is scaled by: divisor n (population) or n − 1 (unbiased). */
export type GroupDeviation = 'population' | 'unbiased';

/** 1 − Var(returns − values) / Var(returns): 1 is a perfect critic, 0 predicts the mean, < 0 worse. */
export function explainedVariance(values_N: ArrayLike<number>, returns_N: ArrayLike<number>): number {
  const diff = Array.from(returns_N, (r, i) => r - values_N[i]!);
  const varReturns = moments(returns_N).std ** 2;
  if (varReturns === 0) return NaN;
  return 1 - moments(diff).std ** 2 / varReturns;
}
