// RMSNorm as Hugging Face's LlamaRMSNorm / Qwen2RMSNorm / Qwen3RMSNorm compute it:
//   y = w ⊙ x / sqrt(mean(x²) + eps), row by row over `dim`.
// Shapes: x, y [rows, dim]; w [dim]; rstd_R [rows] keeps 1/sqrt(mean(x²)+eps) for the backward.
// The WebAssembly SIMD kernels (wasm/simd.ts) run these when available; the loops below are the
// fallback and the reference.
import { simdKernels } from '../wasm/simd.ts';

export function rmsnormForward(
  x: Float32Array, w: Float32Array, y: Float32Array, rstd_R: Float32Array | null,
  rows: number, dim: number, eps: number,
): void {
  if (!simdKernels()?.rmsnormForward(x, w, y, rstd_R, rows, dim, eps)) rmsnormForwardJs(x, w, y, rstd_R, rows, dim, eps);
}

export function rmsnormBackward(
  dy: Float32Array, x: Float32Array, w: Float32Array, rstd_R: Float32Array,
  dx: Float32Array | null, dw: Float32Array | null, rows: number, dim: number, accumulate: boolean,
): void {
  if (!simdKernels()?.rmsnormBackward(dy, x, w, rstd_R, dx, dw, rows, dim, accumulate)) rmsnormBackwardJs(dy, x, w, rstd_R, dx, dw, rows, dim, accumulate);
}

export function rmsnormForwardJs(
  x: Float32Array, w: Float32Array, y: Float32Array, rstd_R: Float32Array | null,
  rows: number, dim: number, eps: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let ss = 0;
    for (let i = 0; i < dim; i++) ss += x[o + i]! * x[o + i]!;
    const rstd = Math.fround(1 / Math.sqrt(Math.fround(ss / dim) + eps));
    if (rstd_R) rstd_R[r] = rstd;
    for (let i = 0; i < dim; i++) y[o + i] = w[i]! * Math.fround(x[o + i]! * rstd);
  }
}

/**
 * dx = rstd · (w⊙dy − x̂ · mean(x̂ ⊙ w⊙dy)) with x̂ = x·rstd; dw += Σ_rows dy ⊙ x̂ (when dw is given).
 * dx is overwritten (accumulate = false) or added to (accumulate = true).
 */
export function rmsnormBackwardJs(
  dy: Float32Array, x: Float32Array, w: Float32Array, rstd_R: Float32Array,
  dx: Float32Array | null, dw: Float32Array | null, rows: number, dim: number, accumulate: boolean,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    const rstd = rstd_R[r]!;
    let dot = 0;
    for (let i = 0; i < dim; i++) {
      const xhat = x[o + i]! * rstd;
      dot += dy[o + i]! * w[i]! * xhat;
      if (dw) dw[i]! += dy[o + i]! * xhat;
    }
    if (!dx) continue;
    const mean = dot / dim;
    for (let i = 0; i < dim; i++) {
      const g = rstd * (dy[o + i]! * w[i]! - x[o + i]! * rstd * mean);
      dx[o + i] = accumulate ? dx[o + i]! + g : g;
    }
  }
}
