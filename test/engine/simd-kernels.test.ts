// The WebAssembly SIMD kernels (src/engine/embedded/wasm/) against the JavaScript loops they replace,
// which stay as the fallback (MARFT_SIMD=0): same results to float32 rounding, at lengths that are not
// multiples of the 4 lanes or of the copy chunks, with offsets, temperatures and causal masks; the
// exp against Math.exp; and the committed module bytes against kernels.wat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { simdKernels } from '../../src/engine/embedded/wasm/simd.ts';
import { swigluBackwardJs, swigluForwardJs } from '../../src/engine/embedded/kernels/swiglu.ts';
import { rmsnormBackwardJs, rmsnormForwardJs } from '../../src/engine/embedded/kernels/rmsnorm.ts';
import { tokenLogprobs, tokenLogprobsBackward, tokenLogprobsBackwardJs } from '../../src/engine/embedded/kernels/log-softmax.ts';
import { softmaxRows, softmaxRowsBackwardJs, softmaxRowsJs } from '../../src/engine/embedded/kernels/softmax.ts';
import { takeBuffer } from '../../src/engine/embedded/buffer-pool.ts';
import { RopeTable, ropeBackward, ropeForward, ropeRotateJs } from '../../src/engine/embedded/kernels/rope.ts';

const simd = simdKernels();

/**
 * Both ways a kernel meets its operands: ordinary arrays (copied through the scratch region in
 * chunks) and buffers from the pool, which live in the WebAssembly arena (worked on in place).
 */
const MODES: [string, (src: Float32Array) => Float32Array][] = [
  ['copied', (src) => src.slice()],
  ['in place', (src) => {
    const b = takeBuffer(src.length);
    b.set(src);
    return b;
  }],
];

function rand(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = scale * ((x / 4294967296) * 2 - 1);
  }
  return out;
}

/** max |a − b| / max(1, |b|) */
function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(b[i]!)));
  return m;
}

test('WebAssembly SIMD kernels load in this runtime', () => {
  assert.ok(simd, 'simdKernels() returned null: no WebAssembly SIMD, or MARFT_SIMD=0 is set');
});

test('SIMD exp: within 2e-7 relative of Math.exp over [-87, 88]; clamped outside', () => {
  const n = 100_003;
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = -87 + (175 * i) / (n - 1);
  const e = simd!.exp(x);
  let worst = 0;
  for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(e[i]! / Math.exp(x[i]!) - 1));
  assert.ok(worst < 2e-7, `max relative error ${worst}`);
  const edges = simd!.exp(Float32Array.from([-1000, -87.5, 0, 1, 100, -0]));
  assert.ok(edges[0]! > 0 && edges[0]! < 2e-38, `e^-1000 clamps to e^-87, got ${edges[0]}`);
  assert.equal(edges[2], 1);
  assert.ok(Math.abs(edges[3]! - Math.E) < 1e-6);
  assert.ok(Number.isFinite(edges[4]!) && edges[4]! > 1e38, `e^100 clamps to e^88, got ${edges[4]}`);
  assert.equal(edges[5], 1);
});

test('SIMD SwiGLU forward and backward equal the JavaScript loops (lengths around lanes and chunks; copied and in place)', () => {
  for (const [mode, mk] of MODES) for (const n of [1, 3, 4, 17, 16384, 16387, 50_001]) {
    const g = mk(rand(n, 1, 12)), u = mk(rand(n, 2)), dh = mk(rand(n, 3));
    const h1 = mk(new Float32Array(n)), s1 = mk(new Float32Array(n)), h2 = new Float32Array(n), s2 = new Float32Array(n);
    simd!.swigluForward(g, u, h1, n, s1);
    swigluForwardJs(g, u, h2, n, s2);
    assert.ok(maxRelDiff(h1, h2) < 1e-6, `h ${mode} n=${n}: ${maxRelDiff(h1, h2)}`);
    assert.ok(maxRelDiff(s1, s2) < 1e-6, `σ ${mode} n=${n}`);
    const hOnly = mk(new Float32Array(n));
    simd!.swigluForward(g, u, hOnly, n, null);
    assert.deepEqual([...hOnly], [...h1]);
    const dg1 = mk(new Float32Array(n)), du1 = mk(new Float32Array(n)), dg2 = new Float32Array(n), du2 = new Float32Array(n);
    simd!.swigluBackward(dh, g, u, s1, dg1, du1, n);
    swigluBackwardJs(dh, g, u, s1, dg2, du2, n);
    assert.ok(maxRelDiff(dg1, dg2) < 1e-6 && maxRelDiff(du1, du2) < 1e-6, `backward ${mode} n=${n}`);
  }
});

/** log softmax(z·invT) at the chosen tokens and the probabilities, in float64. */
function logSoftmaxReference(z: Float32Array, rows: number, vocab: number, tokens: Int32Array, invT: number): { lp: number[]; probs: Float64Array } {
  const lp: number[] = [], probs = new Float64Array(rows * vocab);
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    let max = -Infinity;
    for (let j = 0; j < vocab; j++) max = Math.max(max, z[o + j]! * invT);
    let sum = 0;
    for (let j = 0; j < vocab; j++) sum += Math.exp(z[o + j]! * invT - max);
    const lse = max + Math.log(sum);
    for (let j = 0; j < vocab; j++) probs[o + j] = Math.exp(z[o + j]! * invT - lse);
    lp.push(z[o + tokens[r]!]! * invT - lse);
  }
  return { lp, probs };
}

test('SIMD token log-softmax equals a float64 reference and its backward the JavaScript loop (temperatures, odd vocabularies, chunked rows; copied and in place)', () => {
  for (const [mode, mk] of MODES) for (const [rows, vocab, temperature] of [[5, 7, 1], [33, 2048, 1], [40, 1001, 0.7], [3, 40_000, 1.3]] as const) {
    const logits = rand(rows * vocab, rows + vocab, 8);
    const tokens = Int32Array.from({ length: rows }, (_, r) => (r * 7919) % vocab);
    const a = mk(logits);
    const lpA = new Float32Array(rows);
    tokenLogprobs(a, rows, vocab, tokens, temperature, lpA);
    const want = logSoftmaxReference(logits, rows, vocab, tokens, 1 / temperature);
    assert.ok(maxRelDiff(lpA, want.lp) < 2e-6, `log-probs ${mode} ${rows}x${vocab} T=${temperature}: ${maxRelDiff(lpA, want.lp)}`);
    assert.ok(maxRelDiff(a, want.probs) < 1e-6, `probabilities ${mode} ${rows}x${vocab}`);
    const b = Float32Array.from(a);
    const dlp = rand(rows, 9);
    tokenLogprobsBackward(a, rows, vocab, tokens, temperature, dlp);
    tokenLogprobsBackwardJs(b, rows, vocab, tokens, temperature, dlp);
    assert.ok(maxRelDiff(a, b) < 1e-6, `backward ${mode} ${rows}x${vocab}`);
  }
});

test('SIMD softmax rows: causal masks with a KV-cache offset, offsets into the buffer, sums and maxima; copied and in place', () => {
  for (const [mode, mk] of MODES) for (const [rows, cols, visible0, step, invT] of [[128, 128, 1, 1, 1], [9, 13, 5, 1, 1], [3, 6, 6, 0, 0.5], [300, 301, 2, 1, 1]] as const) {
    const pad = 5;
    const x = mk(rand(pad + rows * cols, rows * 31 + cols, 6));
    const original = x.slice(pad);
    const wantMax: number[] = [], wantSum: number[] = [];
    for (let r = 0; r < rows; r++) {
      const vis = Math.min(cols, visible0 + r * step), o = r * cols;
      let m = -Infinity;
      for (let j = 0; j < vis; j++) m = Math.max(m, original[o + j]!);
      let sum = 0;
      for (let j = 0; j < vis; j++) sum += Math.exp((original[o + j]! - m) * invT);
      wantMax.push(m);
      wantSum.push(sum);
    }
    const ref = original.slice(), lseRef = new Float64Array(rows);
    softmaxRowsJs(ref, 0, rows, cols, visible0, step, invT, lseRef, 0);
    const max = new Float32Array(rows), sum = new Float64Array(rows);
    simd!.softmaxRows(x, pad, rows, cols, visible0, step, invT, max, sum);
    assert.ok(maxRelDiff(x.subarray(pad), ref) < 1e-6, `probabilities ${mode} ${rows}x${cols}`);
    assert.ok(maxRelDiff(max, wantMax) === 0, 'maxima');
    assert.ok(maxRelDiff(sum, wantSum) < 1e-6, 'sums');
    // The dispatching softmaxRows (SIMD here) gives the loop's log-sum-exps.
    const viaDispatch = mk(original), lse = new Float64Array(rows + 2);
    softmaxRows(viaDispatch, 0, rows, cols, visible0, step, invT, lse, 2);
    assert.ok(maxRelDiff(lse.subarray(2), lseRef) < 1e-6, 'log-sum-exps');
    // backward: dp ← p ⊙ (dp − Σ p·dp) over the visible entries
    const dp = mk(rand(pad + rows * cols, 77, 2));
    const dpRef = dp.slice(pad);
    softmaxRowsBackwardJs(ref, 0, dpRef, 0, rows, cols, visible0, step);
    simd!.softmaxBackwardRows(x, pad, dp, pad, rows, cols, visible0, step);
    assert.ok(maxRelDiff(dp.subarray(pad), dpRef) < 1e-6, `backward ${mode} ${rows}x${cols}`);
  }
});

test('SIMD RMSNorm forward and backward equal the JavaScript loops (dims around lanes, accumulate, weight gradients; copied and in place)', () => {
  for (const [mode, mk] of MODES) for (const [rows, dim] of [[1, 3], [7, 64], [1024, 256], [130, 257], [2, 40_000]] as const) {
    const x = mk(rand(rows * dim, dim, 3)), w = rand(dim, 5), dy = mk(rand(rows * dim, 6));
    const y1 = mk(new Float32Array(rows * dim)), y2 = new Float32Array(rows * dim);
    const r1 = new Float32Array(rows), r2 = new Float32Array(rows);
    simd!.rmsnormForward(x, w, y1, r1, rows, dim, 1e-6);
    rmsnormForwardJs(x, w, y2, r2, rows, dim, 1e-6);
    assert.ok(maxRelDiff(y1, y2) < 2e-6 && maxRelDiff(r1, r2) < 2e-6, `forward ${mode} ${rows}x${dim}: ${maxRelDiff(y1, y2)}`);
    for (const accumulate of [false, true]) {
      const base = rand(rows * dim, 8);
      const dx1 = mk(base), dx2 = base.slice();
      const dw1 = rand(dim, 9), dw2 = dw1.slice();
      simd!.rmsnormBackward(dy, x, w, r2, dx1, dw1, rows, dim, accumulate);
      rmsnormBackwardJs(dy, x, w, r2, dx2, dw2, rows, dim, accumulate);
      assert.ok(maxRelDiff(dx1, dx2) < 2e-5, `dx ${mode} ${rows}x${dim} accumulate=${accumulate}: ${maxRelDiff(dx1, dx2)}`);
      assert.ok(maxRelDiff(dw1, dw2) < 2e-5, `dw ${rows}x${dim}: ${maxRelDiff(dw1, dw2)}`);
    }
    const dxOnly = mk(new Float32Array(rows * dim)), dxRef = new Float32Array(rows * dim);
    simd!.rmsnormBackward(dy, x, w, r2, dxOnly, null, rows, dim, false);
    rmsnormBackwardJs(dy, x, w, r2, dxRef, null, rows, dim, false);
    assert.ok(maxRelDiff(dxOnly, dxRef) < 2e-5, 'dx without weight gradient');
  }
});

test('SIMD RoPE (rows in the arena, and ordinary arrays copied through scratch) equals the JavaScript loop, forward and backward, at offsets and positions past 0', () => {
  for (const [mode, mk] of MODES) for (const [heads, headDim, tokens, row0, startPos] of [[4, 64, 128, 0, 0], [2, 8, 37, 5, 300], [14, 64, 300, 2, 17]] as const) {
    const table = new RopeTable(headDim, 10000, 64);
    const n = (row0 + tokens + 3) * heads * headDim;
    const src = rand(Math.max(n, 1 << 15), heads * tokens, 2);
    const loop = src.slice();
    const rows = mk(src);
    assert.equal(simd!.arena!.isBlock(rows), mode === 'in place');
    ropeRotateJs(loop, row0, tokens, heads, startPos, table, 1);
    ropeForward(rows, row0, tokens, heads, startPos, table);
    assert.ok(maxRelDiff(rows, loop) < 1e-6, `forward ${mode} ${heads}x${headDim} at ${startPos}`);
    assert.ok(maxRelDiff(loop, src) > 0.01, 'the rotation changed the rows');
    ropeRotateJs(loop, row0, tokens, heads, startPos, table, -1);
    ropeBackward(rows, row0, tokens, heads, startPos, table);
    assert.ok(maxRelDiff(rows, loop) < 1e-6, `backward ${mode} ${heads}x${headDim} at ${startPos}`);
    assert.ok(maxRelDiff(rows, src) < 1e-5, 'backward undoes forward');
  }
});

test('an arena the memory cannot hold is halved until it fits, with one notice; a bad size is a one-line error', () => {
  const script = "import { simdKernels } from './src/engine/embedded/wasm/simd.ts'; import { takeBuffer } from './src/engine/embedded/buffer-pool.ts'; const s = simdKernels(); const b = takeBuffer(1 << 20); console.log(JSON.stringify({ capacity: s.arena.usage().capacityBytes, inArena: s.arena.isBlock(b) }));";
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const run = (mb: string) => spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root, env: { ...process.env, MARFT_WASM_ARENA_MB: mb }, encoding: 'utf8',
  });
  const r = run('4090'); // 4,090 MB + the 8 MB scratch region is past WebAssembly's 4 GiB
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as { capacity: number; inArena: boolean };
  assert.ok(out.inArena);
  assert.ok(out.capacity < 4096 * 2 ** 20 && out.capacity >= 1000 * 2 ** 20, `capacity ${out.capacity}`);
  assert.match(r.stderr.trim(), /^marft: could not reserve a 4090 MB WebAssembly arena; using \d+ MB \(MARFT_WASM_ARENA_MB\)\.$/);
  const bad = run('lots');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /MARFT_WASM_ARENA_MB must be a number of megabytes from 0 to 4090, got 'lots'/);
});

test('the committed WebAssembly bytes are kernels.wat compiled (scripts/build-wasm.mjs --check)', () => {
  const script = fileURLToPath(new URL('../../scripts/build-wasm.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.match(out, /matches/);
});
