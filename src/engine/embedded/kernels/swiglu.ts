// SwiGLU gate of the Llama/Qwen MLP: h = silu(g) ⊙ u, silu(g) = g·σ(g). All arrays [n].
// The forward can keep σ(g) so the backward needs no second exp. The WebAssembly SIMD kernels
// (wasm/simd.ts) run these passes when available; the loops below are the fallback and the reference.
import { fastExp } from './fast-exp.ts';
import { simdKernels } from '../wasm/simd.ts';

export function swigluForward(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sigmoidOut: Float32Array | null = null): void {
  if (!simdKernels()?.swigluForward(g, u, h, n, sigmoidOut)) swigluForwardJs(g, u, h, n, sigmoidOut);
}

export function swigluBackward(dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number): void {
  if (!simdKernels()?.swigluBackward(dh, g, u, sig, dg, du, n)) swigluBackwardJs(dh, g, u, sig, dg, du, n);
}

export function swigluForwardJs(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sigmoidOut: Float32Array | null = null): void {
  for (let i = 0; i < n; i++) {
    const gi = g[i]!;
    const sig = 1 / (1 + fastExp(-gi));
    if (sigmoidOut) sigmoidOut[i] = sig;
    h[i] = gi * sig * u[i]!;
  }
}

/** dg = dh·u·σ(g)(1 + g(1 − σ(g))), du = dh·silu(g). Overwrites dg and du. `sig` holds σ(g) from the forward. */
export function swigluBackwardJs(dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const gi = g[i]!, s = sig[i]!, d = dh[i]!;
    du[i] = d * gi * s;
    dg[i] = d * u[i]! * s * (1 + gi * (1 - s));
  }
}
