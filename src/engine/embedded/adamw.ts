// AdamW with global-norm gradient clipping, step for step as torch.optim.AdamW (foreach=False)
// and torch.nn.utils.clip_grad_norm_ compute it:
//   clip: total = ‖(‖g_i‖)_i‖₂; coef = min(1, max_norm / (total + 1e-6)); g ← g·coef
//   p ← p·(1 − lr·wd); m ← m + (g − m)(1 − β1); v ← β2·v + (1 − β2)·g²
//   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps)
import type { OptimParams } from '../types.ts';
import type { Param } from './param.ts';
import type { AdamState } from '../hf/optimizer-state-file.ts';

export function newAdamState(params: Param[]): AdamState {
  return { step: 0, m: params.map((p) => new Float32Array(p.data.length)), v: params.map((p) => new Float32Array(p.data.length)) };
}

/** Global L2 norm of the gradients (missing gradients count as zero). */
export function gradNorm(params: Param[]): number {
  let total = 0;
  for (const p of params) {
    if (!p.grad) continue;
    let ss = 0;
    for (let i = 0; i < p.grad.length; i++) ss += p.grad[i]! * p.grad[i]!;
    total += Math.fround(Math.sqrt(ss)) ** 2;
  }
  return Math.fround(Math.sqrt(total));
}

/** One AdamW step (clipping first); returns the pre-clip gradient norm. Gradients are left untouched. */
export function adamwStep(params: Param[], state: AdamState, o: OptimParams): number {
  if (state.m.length !== params.length) throw new Error('optimiser state does not match the trainable parameters');
  const norm = gradNorm(params);
  const coef = o.maxGradNorm > 0 ? Math.min(1, Math.fround(o.maxGradNorm / (norm + 1e-6))) : 1;
  state.step++;
  const t = state.step;
  const bc1 = 1 - o.beta1 ** t, bc2Sqrt = Math.sqrt(1 - o.beta2 ** t);
  const stepSize = o.lr / bc1;
  const decay = Math.fround(1 - o.lr * o.weightDecay);
  const f = Math.fround;
  params.forEach((p, k) => {
    const m = state.m[k]!, v = state.v[k]!, w = p.data, g = p.grad;
    for (let i = 0; i < w.length; i++) {
      const gi = g ? f(g[i]! * coef) : 0;
      if (o.weightDecay !== 0) w[i] = f(w[i]! * decay);
      m[i] = f(m[i]! + f(f(gi - m[i]!) * f(1 - o.beta1)));
      v[i] = f(f(v[i]! * o.beta2) + f(f(gi * gi) * f(1 - o.beta2)));
      const denom = f(f(f(Math.sqrt(v[i]!)) / bc2Sqrt) + o.eps);
      w[i] = f(w[i]! - f(stepSize * f(m[i]! / denom)));
    }
  });
  return norm;
}
