// Softmax over rows, in place, with each row's log-sum-exp, and its backward. Causal attention (per
// head and for a decoded token's heads) and the vocabulary log-softmax share it.
// Row r covers its first min(cols, visible0 + r·visibleStep) entries; the rest of the row becomes 0
// (visibleStep 0 with visible0 = cols: whole rows; visibleStep 1 with visible0 = past + 1: causal rows).
// The WebAssembly SIMD kernels (wasm/simd.ts) run both when available; the loops below otherwise,
// and they are the tests' reference.
import { fastExp } from './fast-exp.ts';
import { simdKernels } from '../wasm/simd.ts';

/**
 * Rows of x [rows, cols] from `offset` become softmax(x·invT) over their visible entries;
 * lse[lseAt + r] (when lse is given) receives log Σ_j e^(x_j·invT) over them.
 */
export function softmaxRows(
  x: Float32Array, offset: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number,
  lse: Float32Array | Float64Array | null, lseAt: number,
): void {
  const simd = simdKernels();
  if (simd) {
    const max = new Float32Array(rows), sum = new Float64Array(rows);
    if (simd.softmaxRows(x, offset, rows, cols, visible0, visibleStep, invT, max, sum)) {
      if (lse) for (let r = 0; r < rows; r++) lse[lseAt + r] = max[r]! * invT + Math.log(sum[r]!);
      return;
    }
  }
  softmaxRowsJs(x, offset, rows, cols, visible0, visibleStep, invT, lse, lseAt);
}

export function softmaxRowsJs(
  x: Float32Array, offset: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number,
  lse: Float32Array | Float64Array | null, lseAt: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = offset + r * cols, visible = Math.min(cols, visible0 + r * visibleStep);
    let max = -Infinity;
    for (let j = 0; j < visible; j++) if (x[o + j]! > max) max = x[o + j]!;
    let sum = 0;
    for (let j = 0; j < visible; j++) {
      const e = fastExp((x[o + j]! - max) * invT);
      x[o + j] = e;
      sum += e;
    }
    const inv = 1 / sum;
    for (let j = 0; j < visible; j++) x[o + j]! *= inv;
    x.fill(0, o + visible, o + cols);
    if (lse) lse[lseAt + r] = max * invT + Math.log(sum);
  }
}

/** dp ← p ⊙ (dp − Σ_j p_j·dp_j) over each row's visible entries (rows laid out as for softmaxRows), 0 after them. */
export function softmaxRowsBackward(
  p: Float32Array, pOffset: number, dp: Float32Array, dpOffset: number, rows: number, cols: number, visible0: number, visibleStep: number,
): void {
  if (!simdKernels()?.softmaxBackwardRows(p, pOffset, dp, dpOffset, rows, cols, visible0, visibleStep)) {
    softmaxRowsBackwardJs(p, pOffset, dp, dpOffset, rows, cols, visible0, visibleStep);
  }
}

export function softmaxRowsBackwardJs(
  p: Float32Array, pOffset: number, dp: Float32Array, dpOffset: number, rows: number, cols: number, visible0: number, visibleStep: number,
): void {
  for (let r = 0; r < rows; r++) {
    const po = pOffset + r * cols, d = dpOffset + r * cols, visible = Math.min(cols, visible0 + r * visibleStep);
    let dot = 0;
    for (let j = 0; j < visible; j++) dot += p[po + j]! * dp[d + j]!;
    for (let j = 0; j < visible; j++) dp[d + j] = p[po + j]! * (dp[d + j]! - dot);
    dp.fill(0, d + visible, d + cols);
  }
}
