// Slow, obviously-correct references for the fast kernels (llm.c / nanoGPT house style): plain loops
// in float64, no BLAS, no recomputation tricks. test/engine/kernels.test.ts compares each fast kernel
// with its reference.
import type { AttentionDims } from './attention.ts';

/** Causal GQA attention of T tokens (positions 0 … T−1); q [T, nH·hd], k/v [T, nKv·hd] → out [T, nH·hd]. */
export function attentionReference(d: AttentionDims, T: number, q: Float32Array, k: Float32Array, v: Float32Array): Float64Array {
  const { nHeads, nKvHeads, headDim } = d;
  const out = new Float64Array(T * nHeads * headDim);
  for (let h = 0; h < nHeads; h++) {
    const g = Math.floor(h / (nHeads / nKvHeads));
    for (let i = 0; i < T; i++) {
      const s: number[] = [];
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let c = 0; c < headDim; c++) dot += q[(i * nHeads + h) * headDim + c]! * k[(j * nKvHeads + g) * headDim + c]!;
        s.push(dot / Math.sqrt(headDim));
      }
      const max = Math.max(...s);
      const e = s.map((x) => Math.exp(x - max));
      const z = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j <= i; j++) {
        for (let c = 0; c < headDim; c++) out[(i * nHeads + h) * headDim + c]! += (e[j]! / z) * v[(j * nKvHeads + g) * headDim + c]!;
      }
    }
  }
  return out;
}

/** Σ dout ⊙ attention(q, k, v): a scalar whose gradient is the attention backward of `dout`. */
export function attentionLossReference(d: AttentionDims, T: number, q: Float32Array, k: Float32Array, v: Float32Array, dout: Float32Array): number {
  const out = attentionReference(d, T, q, k, v);
  let loss = 0;
  for (let i = 0; i < out.length; i++) loss += out[i]! * dout[i]!;
  return loss;
}

/** Central finite difference of f with respect to x[i] (x restored afterwards). */
export function finiteDifference(f: () => number, x: Float32Array, i: number, eps = 1e-3): number {
  const old = x[i]!;
  x[i] = old + eps;
  const up = f();
  x[i] = old - eps;
  const down = f();
  x[i] = old;
  return (up - down) / (2 * eps);
}

/** Naive y = x Wᵀ + b + s·(x Aᵀ) Bᵀ in float64; x [N, in], W [out, in], A [r, in], B [out, r]. */
export function linearReference(
  x: Float32Array, N: number, W: Float32Array, out: number, inF: number, b: Float32Array | null,
  A: Float32Array | null, B: Float32Array | null, r: number, s: number,
): Float64Array {
  const y = new Float64Array(N * out);
  for (let n = 0; n < N; n++) {
    const xa = new Float64Array(r);
    for (let a = 0; a < r; a++) for (let c = 0; c < inF; c++) xa[a]! += x[n * inF + c]! * A![a * inF + c]!;
    for (let o = 0; o < out; o++) {
      let acc = b ? b[o]! : 0;
      for (let c = 0; c < inF; c++) acc += x[n * inF + c]! * W[o * inF + c]!;
      for (let a = 0; a < r; a++) acc += s * xa[a]! * B![o * r + a]!;
      y[n * out + o] = acc;
    }
  }
  return y;
}
