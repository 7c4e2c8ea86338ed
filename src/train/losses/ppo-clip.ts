// PPO-clip with the decoupled objective of App. B (spec section 4): the ratio is taken against the
// proximal policy (the old policy's log-probs recomputed by a forward pass) and each unit is
// weighted by a behaviour importance weight min(π_prox / π_behaviour, cap) (cap 5), which corrects
// for the sampler's policy differing from the proximal one (staleness, numerics, truncation).
//
// A "unit" is whatever one ratio is taken over: an agent action (action-level MARFT, log-probs
// normalised by src/train/losses/action-normalisation.ts) or a token (token-level MARFT).
//
//   r_i   = exp(logprobs_N[i] − proximalLogprobs_N[i])
//   iw_i  = min(exp(proximalLogprobs_N[i] − behaviourLogprobs_N[i]), behaviourCap)   (1 when not decoupled)
//   ℓ_i   = −iw_i · min(r_i·A_i, clip(r_i, 1 − ε_low, 1 + ε_high)·A_i)
//   dual clip c (Ye et al. 2020, "Mastering Complex Control in MOBA Games"; verl's clip_ratio_c),
//   when given: for A_i < 0, ℓ_i = −iw_i · max(min(r_i·A_i, clip(r_i)·A_i), c·A_i), so the loss of
//   a bad action whose ratio has grown past c stops growing (its gradient is 0 there)
//   loss  = Σ_i weights_N[i] · ℓ_i
//   dloss/dlogprobs_N[i] = −weights_N[i]·iw_i·A_i·r_i where the unclipped term is the one taken, else 0.

export interface PpoClipInput {
  /** Log-probs of the units under the policy being trained (the only quantity differentiated). */
  logprobs_N: ArrayLike<number>;
  proximalLogprobs_N: ArrayLike<number>;
  advantages_N: ArrayLike<number>;
  /** Aggregation weight of each unit (e.g. 1/N for a mean); masked units have weight 0. */
  weights_N: ArrayLike<number>;
  clipLow: number;
  clipHigh: number;
  /** Sampler log-probs; when given, the decoupled loss is used. */
  behaviourLogprobs_N?: ArrayLike<number>;
  /** Cap of the behaviour importance weights (App. B: 5). */
  behaviourCap?: number;
  /** The dual clip c (> 1) for negative advantages; absent: off. */
  dualClip?: number;
}

export interface PpoClipOutput {
  loss: number;
  dLogprobs_N: Float64Array;
  /** Weighted fraction of units whose clipped term is active. */
  clipFraction: number;
  /** Weighted mean of the behaviour importance weights (1 when not decoupled). */
  meanImportanceWeight: number;
  /** Weighted fraction of units whose importance weight hit the cap. */
  cappedFraction: number;
}

export function ppoClipLoss(input: PpoClipInput): PpoClipOutput {
  const { logprobs_N, proximalLogprobs_N, advantages_N, weights_N, clipLow, clipHigh, behaviourLogprobs_N } = input;
  const cap = input.behaviourCap ?? Infinity;
  const n = logprobs_N.length;
  const dLogprobs_N = new Float64Array(n);
  let loss = 0;
  let clipped = 0;
  let iwSum = 0;
  let capped = 0;
  let weightSum = 0;
  for (let i = 0; i < n; i++) {
    const w = weights_N[i]!;
    if (w === 0) continue;
    const a = advantages_N[i]!;
    const r = Math.exp(logprobs_N[i]! - proximalLogprobs_N[i]!);
    let iw = 1;
    if (behaviourLogprobs_N) {
      const raw = Math.exp(proximalLogprobs_N[i]! - behaviourLogprobs_N[i]!);
      iw = Math.min(raw, cap);
      if (raw >= cap) capped += w;
    }
    const surr1 = r * a;
    const surr2 = Math.min(Math.max(r, 1 - clipLow), 1 + clipHigh) * a;
    const floor = input.dualClip !== undefined && a < 0 ? input.dualClip * a : -Infinity;
    if (surr1 <= surr2 && surr1 >= floor) {
      loss -= w * iw * surr1;
      dLogprobs_N[i] = -w * iw * surr1;
    } else {
      loss -= w * iw * Math.max(Math.min(surr1, surr2), floor);
      clipped += w;
    }
    iwSum += w * iw;
    weightSum += w;
  }
  const norm = weightSum > 0 ? weightSum : 1;
  return { loss, dLogprobs_N, clipFraction: clipped / norm, meanImportanceWeight: weightSum > 0 ? iwSum / norm : 1, cappedFraction: capped / norm };
}
