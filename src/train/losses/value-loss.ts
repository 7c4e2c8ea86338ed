// Clipped value loss of the centralised critic (PPO style), squared error or Huber.
//
//   e1_i  = values_N[i] − returns_N[i]
//   vc_i  = oldValues_N[i] + clamp(values_N[i] − oldValues_N[i], −c, c)     (c = clip; 0 = no clipping)
//   e2_i  = vc_i − returns_N[i]
//   ℓ_i   = max(h(e1_i), h(e2_i)),  h(e) = ½e² (mse) or Huber_δ(e) = ½e² if |e| ≤ δ else δ(|e| − ½δ)
//   loss  = Σ_i weights_N[i] · ℓ_i
// The gradient flows through e1 when it is the larger term, and through e2 only while the clamp is
// inactive (then e1 = e2).

import type { ValueLossKind } from '../../config/choices.ts';
export type { ValueLossKind };

export interface ValueLossInput {
  values_N: ArrayLike<number>;
  oldValues_N: ArrayLike<number>;
  returns_N: ArrayLike<number>;
  weights_N: ArrayLike<number>;
  kind: ValueLossKind;
  /** Value clip range c; 0 disables clipping. */
  clip: number;
  /** Huber δ. */
  huberDelta?: number;
}

export interface ValueLossOutput {
  loss: number;
  dValues_N: Float64Array;
  /** Weighted fraction of units where the clipped term was the larger one. */
  clipFraction: number;
}

function penalty(e: number, kind: ValueLossKind, delta: number): number {
  if (kind === 'mse' || Math.abs(e) <= delta) return 0.5 * e * e;
  return delta * (Math.abs(e) - 0.5 * delta);
}

function penaltyGrad(e: number, kind: ValueLossKind, delta: number): number {
  if (kind === 'mse' || Math.abs(e) <= delta) return e;
  return delta * Math.sign(e);
}

export function valueLoss(input: ValueLossInput): ValueLossOutput {
  const { values_N, oldValues_N, returns_N, weights_N, kind, clip } = input;
  const delta = input.huberDelta ?? 1;
  const dValues_N = new Float64Array(values_N.length);
  let loss = 0;
  let clipped = 0;
  let weightSum = 0;
  for (let i = 0; i < values_N.length; i++) {
    const w = weights_N[i]!;
    if (w === 0) continue;
    weightSum += w;
    const v = values_N[i]!;
    const e1 = v - returns_N[i]!;
    const h1 = penalty(e1, kind, delta);
    if (clip <= 0) {
      loss += w * h1;
      dValues_N[i] = w * penaltyGrad(e1, kind, delta);
      continue;
    }
    const diff = v - oldValues_N[i]!;
    const clampActive = diff < -clip || diff > clip;
    const e2 = oldValues_N[i]! + Math.min(Math.max(diff, -clip), clip) - returns_N[i]!;
    const h2 = penalty(e2, kind, delta);
    if (h1 >= h2) {
      loss += w * h1;
      dValues_N[i] = w * penaltyGrad(e1, kind, delta);
    } else {
      loss += w * h2;
      clipped += w;
      dValues_N[i] = clampActive ? 0 : w * penaltyGrad(e2, kind, delta);
    }
  }
  return { loss, dValues_N, clipFraction: weightSum > 0 ? clipped / weightSum : 0 };
}
