// Fast kernels against slow references (src/engine/embedded/kernels/reference.ts) and finite differences:
// attention forward/backward (causal, GQA, KV-cache offsets), RMSNorm, RoPE, SwiGLU, the token
// log-softmax and the LoRA linear layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attentionBackward, attentionForward, type AttentionDims } from '../../src/engine/embedded/kernels/attention.ts';
import { attentionLossReference, attentionReference, finiteDifference, linearReference } from '../../src/engine/embedded/kernels/reference.ts';
import { rmsnormBackward, rmsnormForward } from '../../src/engine/embedded/kernels/rmsnorm.ts';
import { RopeTable, ropeBackward, ropeForward } from '../../src/engine/embedded/kernels/rope.ts';
import { swigluBackward, swigluForward } from '../../src/engine/embedded/kernels/swiglu.ts';
import { tokenLogprobs, tokenLogprobsBackward } from '../../src/engine/embedded/kernels/log-softmax.ts';
import { linearBackward, linearForward } from '../../src/engine/embedded/linear.ts';
import { param } from '../../src/engine/embedded/param.ts';
import { fastExp } from '../../src/engine/embedded/kernels/fast-exp.ts';

function rand(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = scale * (x / 4294967296 * 2 - 1);
  }
  return out;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const d: AttentionDims = { nHeads: 4, nKvHeads: 2, headDim: 8 };
const T = 11;

test('attention forward equals the reference (loop and sgemm paths); a KV-cache continuation equals the full pass', () => {
  for (const len of [T, 70]) { // 11·11·8 multiply-adds per head take the loop path, 70·70·8 the sgemm path
    const q = rand(len * 32, 1), k = rand(len * 16, 2), v = rand(len * 16, 3);
    const out = new Float32Array(len * 32);
    attentionForward(d, q, 0, len, k, v, 0, 0, out, 0, new Float32Array(len * 4), 0);
    assert.ok(maxDiff(out, attentionReference(d, len, q, k, v)) < 1e-6, `T=${len}`);
  }
  const q = rand(T * 32, 1), k = rand(T * 16, 2), v = rand(T * 16, 3);
  const out = new Float32Array(T * 32), lse = new Float32Array(T * 4);
  attentionForward(d, q, 0, T, k, v, 0, 0, out, 0, lse, 0);
  // The last 4 queries against all T keys (the first 7 "cached") give the same rows.
  const tail = new Float32Array(4 * 32);
  attentionForward(d, q.subarray(7 * 32), 0, 4, k, v, 0, 7, tail, 0, null, 0);
  assert.ok(maxDiff(tail, out.subarray(7 * 32)) < 1e-6);
});

/**
 * One decoded token against a cache of len − 1 positions equals the last row of the full pass (output,
 * log-sum-exp), and writes only its output row; returns the full pass's output.
 */
function checkDecodedToken(dims: AttentionDims, len: number, seed: number): { q: Float32Array; k: Float32Array; v: Float32Array; full: Float32Array } {
  const qW = dims.nHeads * dims.headDim, kvW = dims.nKvHeads * dims.headDim;
  const q = rand(len * qW, seed), k = rand(len * kvW, seed + 1), v = rand(len * kvW, seed + 2);
  const full = new Float32Array(len * qW), lseFull = new Float32Array(len * dims.nHeads);
  attentionForward(dims, q, 0, len, k, v, 0, 0, full, 0, lseFull, 0);
  assert.ok(maxDiff(full, attentionReference(dims, len, q, k, v)) < 1e-5, `reference T=${len}`);
  const last = new Float32Array(2 * qW).fill(Number.NaN), lse = new Float32Array(dims.nHeads);
  attentionForward(dims, q.subarray((len - 1) * qW), 0, 1, k, v, 0, len - 1, last, 1, lse, 0);
  assert.ok(maxDiff(last.subarray(qW), full.subarray((len - 1) * qW)) < 1e-6, `decode T=${len}`);
  assert.ok(last.subarray(0, qW).every(Number.isNaN), 'rows outside the output row are untouched');
  for (let h = 0; h < dims.nHeads; h++) assert.ok(Math.abs(lse[h]! - lseFull[h * len + len - 1]!) < 1e-5, `lse head ${h} T=${len}`);
  return { q, k, v, full };
}

test('attention, one decoded token of a multi-head model (all heads in two products) equals the full pass', () => {
  // 4 heads · T · 32 multiply-adds above 4,096 take the all-heads path, 4·20·32 the loop path.
  for (const len of [150, 40, 20]) checkDecodedToken({ nHeads: 4, nKvHeads: 4, headDim: 32 }, len, 21);
});

test('attention, one decoded token of a grouped-query model (a group of heads in two products) equals the full pass', () => {
  // SmolLM2-135M's grouping: 9 query heads on 3 key/value heads. 3 heads · T · 16 multiply-adds above
  // 4,096 take the grouped path (T = 200, 120), T = 20 the loop path.
  const gqa: AttentionDims = { nHeads: 9, nKvHeads: 3, headDim: 16 };
  const qW = 9 * 16;
  for (const len of [200, 120, 20]) {
    const { q, k, v, full } = checkDecodedToken(gqa, len, 31);
    // One group alone (heads 3-5, as a pool item computes it) writes only its heads' columns.
    const one = new Float32Array(qW).fill(Number.NaN);
    attentionForward(gqa, q.subarray((len - 1) * qW), 0, 1, k, v, 0, len - 1, one, 0, null, 0, null, 0, 3, 6);
    assert.ok(maxDiff(one.subarray(48, 96), full.subarray((len - 1) * qW + 48, (len - 1) * qW + 96)) < 1e-6, `group 1, T=${len}`);
    assert.ok(one.subarray(0, 48).every(Number.isNaN) && one.subarray(96).every(Number.isNaN), 'other groups untouched');
  }
});

test('attention backward equals finite differences of the reference (q, k, v; one and two causal row blocks)', () => {
  for (const len of [T, 70]) {
    const q = rand(len * 32, 4), k = rand(len * 16, 5), v = rand(len * 16, 6), dout = rand(len * 32, 7);
    const out = new Float32Array(len * 32), lse = new Float32Array(len * 4);
    attentionForward(d, q, 0, len, k, v, 0, 0, out, 0, lse, 0);
    const dq = new Float32Array(len * 32), dk = new Float32Array(len * 16), dv = new Float32Array(len * 16);
    attentionBackward(d, len, 0, q, k, v, lse, 0, dout, dq, dk, dv);
    const loss = (): number => attentionLossReference(d, len, q, k, v, dout);
    for (const [x, g] of [[q, dq], [k, dk], [v, dv]] as const) {
      for (let i = 0; i < x.length; i += len === T ? 7 : 13) assert.ok(Math.abs(finiteDifference(loss, x, i) - g[i]!) < 2e-3, `T=${len} index ${i}`);
    }
  }
});

test('attention: a KV-cache continuation of 70 queries (two row blocks) after 10 cached keys equals the full pass', () => {
  const len = 80, past = 10;
  const q = rand(len * 32, 31), k = rand(len * 16, 32), v = rand(len * 16, 33);
  const full = new Float32Array(len * 32);
  attentionForward(d, q, 0, len, k, v, 0, 0, full, 0, null, 0);
  const tail = new Float32Array((len - past) * 32);
  attentionForward(d, q.subarray(past * 32), 0, len - past, k, v, 0, past, tail, 0, null, 0);
  assert.ok(maxDiff(tail, full.subarray(past * 32)) < 1e-6);
  assert.ok(maxDiff(full, attentionReference(d, len, q, k, v)) < 1e-6);
});

test('attention with kept probabilities: same output, probabilities sum to 1, same gradients as recomputing them', () => {
  for (const len of [T, 70]) { // loop path and sgemm path of the forward
    const q = rand(len * 32, 11), k = rand(len * 16, 12), v = rand(len * 16, 13), dout = rand(len * 32, 14);
    const out = new Float32Array(len * 32), lse = new Float32Array(len * 4);
    attentionForward(d, q, 0, len, k, v, 0, 0, out, 0, lse, 0);
    const offset = 5; // probabilities stored from a non-zero offset, as for the second sequence of a batch
    const probs = new Float32Array(offset + 4 * len * len).fill(Number.NaN);
    const outKept = new Float32Array(len * 32), lseKept = new Float32Array(len * 4);
    attentionForward(d, q, 0, len, k, v, 0, 0, outKept, 0, lseKept, 0, probs, offset);
    assert.deepEqual(outKept, out);
    assert.deepEqual(lseKept, lse);
    for (let h = 0; h < 4; h++) {
      for (let i = 0; i < len; i++) {
        const row = probs.subarray(offset + (h * len + i) * len, offset + (h * len + i + 1) * len);
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += row[j]!;
        assert.ok(Math.abs(sum - 1) < 1e-5, `T=${len} h=${h} i=${i} sum ${sum}`);
        for (let j = i + 1; j < len; j++) assert.equal(row[j], 0);
      }
    }
    const grads = (kept: Float32Array | null): Float32Array[] => {
      const dq = new Float32Array(len * 32), dk = new Float32Array(len * 16), dv = new Float32Array(len * 16);
      attentionBackward(d, len, 0, q, k, v, lse, 0, dout, dq, dk, dv, kept, offset);
      return [dq, dk, dv];
    };
    const recomputed = grads(null), fromKept = grads(probs);
    for (let t = 0; t < 3; t++) {
      const scale = Math.max(...recomputed[t]!.map(Math.abs));
      assert.ok(maxDiff(fromKept[t]!, recomputed[t]!) < 1e-5 * scale, `T=${len} grad ${t}`);
    }
    // The backward reads the kept probabilities: dV = Pᵀ·dO is linear in them.
    const dvDoubled = grads(probs.map((p) => 2 * p))[2]!;
    assert.ok(maxDiff(dvDoubled, recomputed[2]!.map((g) => 2 * g)) < 2e-5 * Math.max(...recomputed[2]!.map(Math.abs)));
  }
});

test('RMSNorm backward equals finite differences (input and weight)', () => {
  const rows = 3, dim = 16, x = rand(rows * dim, 8, 2), w = rand(dim, 9), dy = rand(rows * dim, 10);
  const y = new Float32Array(rows * dim), rstd = new Float32Array(rows);
  const loss = (): number => {
    rmsnormForward(x, w, y, rstd, rows, dim, 1e-6);
    return y.reduce((a, yi, i) => a + yi * dy[i]!, 0);
  };
  loss();
  const dx = new Float32Array(rows * dim), dw = new Float32Array(dim);
  rmsnormBackward(dy, x, w, rstd, dx, dw, rows, dim, false);
  for (let i = 0; i < x.length; i += 3) assert.ok(Math.abs(finiteDifference(loss, x, i) - dx[i]!) < 2e-3);
  for (let i = 0; i < dim; i++) assert.ok(Math.abs(finiteDifference(loss, w, i) - dw[i]!) < 2e-3);
});

test('RoPE: backward is the transpose of forward; position 0 is the identity', () => {
  const table = new RopeTable(8, 10000, 4);
  const x = rand(5 * 2 * 8, 11), y = rand(5 * 2 * 8, 12);
  const rx = Float32Array.from(x);
  ropeForward(rx, 0, 5, 2, 3, table); // grows the table past 4 positions
  const ry = Float32Array.from(y);
  ropeBackward(ry, 0, 5, 2, 3, table);
  const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, ai, i) => s + ai * b[i]!, 0);
  assert.ok(Math.abs(dot(rx, y) - dot(x, ry)) < 1e-5);
  const p0 = Float32Array.from(x.subarray(0, 16));
  ropeForward(p0, 0, 1, 2, 0, table);
  assert.ok(maxDiff(p0, x.subarray(0, 16)) < 1e-7);
});

test('SwiGLU and the token log-softmax: backward equals finite differences', () => {
  const n = 20, g = rand(n, 13, 3), u = rand(n, 14, 2), dh = rand(n, 15);
  const h = new Float32Array(n), sig = new Float32Array(n);
  const lossS = (): number => { swigluForward(g, u, h, n); return h.reduce((a, hi, i) => a + hi * dh[i]!, 0); };
  swigluForward(g, u, h, n, sig);
  const dg = new Float32Array(n), du = new Float32Array(n);
  swigluBackward(dh, g, u, sig, dg, du, n);
  for (let i = 0; i < n; i++) {
    assert.ok(Math.abs(finiteDifference(lossS, g, i) - dg[i]!) < 1e-3);
    assert.ok(Math.abs(finiteDifference(lossS, u, i) - du[i]!) < 1e-3);
  }
  const rows = 3, V = 9, z = rand(rows * V, 16, 4), toks = Int32Array.from([2, 0, 8]), dlp = rand(rows, 17);
  for (const temp of [1, 0.6]) {
    const lossL = (): number => {
      const lp = new Float32Array(rows);
      tokenLogprobs(Float32Array.from(z), rows, V, toks, temp, lp);
      return lp.reduce((a, l, i) => a + l * dlp[i]!, 0);
    };
    const probs = Float32Array.from(z), lp = new Float32Array(rows);
    tokenLogprobs(probs, rows, V, toks, temp, lp);
    tokenLogprobsBackward(probs, rows, V, toks, temp, dlp);
    for (let i = 0; i < z.length; i++) assert.ok(Math.abs(finiteDifference(lossL, z, i) - probs[i]!) < 1e-3, `T=${temp} i=${i}`);
  }
});

test('linear layer with LoRA: forward equals the reference, backward equals finite differences', () => {
  const N = 5, inF = 6, out = 4, r = 2, s = 1.5;
  const W = param([out, inF], rand(out * inF, 18)), b = param([out], rand(out, 19));
  const A = param([r, inF], rand(r * inF, 20)), B = param([out, r], rand(out * r, 21));
  const op = { W, bias: b, lora: { A, B }, scale: s };
  const x = rand(N * inF, 22), dy = rand(N * out, 23);
  const y = new Float32Array(N * out);
  const xa = linearForward(op, x, N, y);
  assert.ok(maxDiff(y, linearReference(x, N, W.data, out, inF, b.data, A.data, B.data, r, s)) < 1e-6);
  for (const p of [W, b, A, B]) p.grad = new Float32Array(p.data.length);
  const dx = new Float32Array(N * inF);
  linearBackward(op, x, xa, dy, N, dx, false, { base: true, lora: true });
  const loss = (): number => linearReference(x, N, W.data, out, inF, b.data, A.data, B.data, r, s).reduce((a, yi, i) => a + yi * dy[i]!, 0);
  for (const [t, g] of [[x, dx], [W.data, W.grad!], [b.data, b.grad!], [A.data, A.grad!], [B.data, B.grad!]] as const) {
    for (let i = 0; i < t.length; i++) assert.ok(Math.abs(finiteDifference(loss, t, i) - g[i]!) < 1e-3);
  }
});

test('fastExp equals Math.exp to float64 rounding over the whole range, special values included', () => {
  let maxRel = 0;
  // A deterministic sweep of [-745, 709.7] (e^709.8 overflows) with an irrational step, plus the softmax range [-30, 0] densely.
  for (let x = -745; x < 709.7; x += 0.0137 * Math.SQRT2) {
    const e = Math.exp(x);
    if (e > 1e-300) maxRel = Math.max(maxRel, Math.abs(fastExp(x) - e) / e);
  }
  for (let i = 0; i <= 300_000; i++) {
    const x = -30 * (i / 300_000) ** 1.7;
    maxRel = Math.max(maxRel, Math.abs(fastExp(x) - Math.exp(x)) / Math.exp(x));
  }
  assert.ok(maxRel < 2e-15, `max relative error ${maxRel}`);
  assert.equal(fastExp(0), 1);
  assert.equal(fastExp(-Infinity), 0);
  assert.equal(fastExp(Infinity), Infinity);
  assert.ok(Number.isNaN(fastExp(NaN)));
  assert.equal(fastExp(709.5), Math.exp(709.5));
  assert.equal(fastExp(800), Infinity);
  assert.equal(fastExp(-800), 0);
  assert.equal(fastExp(-742), Math.exp(-742));
});
