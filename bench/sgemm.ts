// Matrix-kernel micro-benchmark: GFLOP/s of sgemm through koffi + BLAS against the no-BLAS
// kernels (the WebAssembly SIMD one the engine uses without BLAS, and the JavaScript loops), square sizes 128-1024 in the three layouts the engine uses (forward
// x·Wᵀ = NT, backward dX = dY·W = NN, dW = dYᵀ·X = TN), and the per-call cost of tiny products
// (which sets SMALL_PRODUCT_MNK in src/engine/embedded/blas.ts).
//
//   node --import tsx bench/sgemm.ts [--sizes 128,256,512,1024] [--portable-max 512] [--engine-shapes] [--json]
//   --engine-shapes adds the products of the reference benchmark model's training step (8 × 128
//   tokens, hidden 256, FFN 1024, vocab 2048), e.g. 1024×2048×256 for the logits.
//   OPENBLAS_NUM_THREADS=1  node --import tsx bench/sgemm.ts      one BLAS thread
//
// Results go to docs/performance.md, "Matrix kernel".

import { parseArgs } from 'node:util';
import { blasInfo, sgemm, sgemmNative, sgemmPortable, sgemmSimd, SMALL_PRODUCT_MNK } from '../src/engine/embedded/blas.ts';
import { simdKernels } from '../src/engine/embedded/wasm/simd.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '128,256,512,1024' },
    'portable-max': { type: 'string', default: '512' },
    json: { type: 'boolean', default: false },
    'engine-shapes': { type: 'boolean', default: false },
  },
});
const sizes = (values.sizes ?? '128,256,512,1024').split(',').map(Number);
const portableMax = Number(values['portable-max'] ?? 512);

type Kernel = typeof sgemm;
type Layout = 'NN' | 'NT' | 'TN';

function filled(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
  return a;
}

/** Best-of-runs GFLOP/s for an M×N×K product; runs repeat until ~minSeconds have passed. */
function gflops(kernel: Kernel, layout: Layout, n: number, minSeconds: number, mnk: [number, number, number] = [n, n, n]): number {
  const [M, N, K] = mnk;
  const A = filled(M * K), B = filled(K * N), C = new Float32Array(M * N);
  const tA = layout === 'TN', tB = layout === 'NT';
  const lda = tA ? M : K, ldb = tB ? K : N;
  const run = (): void => kernel(tA, tB, M, N, K, 1, A, 0, lda, B, 0, ldb, 0, C, 0, N);
  run(); // warm-up: JIT, BLAS thread start
  let best = Infinity;
  let spent = 0;
  let reps = 0;
  while (spent < minSeconds * 1000 || reps < 3) {
    const t0 = performance.now();
    run();
    const dt = performance.now() - t0;
    best = Math.min(best, dt);
    spent += dt;
    reps++;
    if (reps >= 200) break;
  }
  return (2 * M * N * K) / (best * 1e6);
}

/** Mean µs per call of an m×n×k product (tiny sizes: call overhead dominates). */
function microseconds(kernel: Kernel, m: number, n: number, k: number): number {
  const A = filled(m * k), B = filled(k * n), C = new Float32Array(m * n);
  const reps = 200_000;
  for (let i = 0; i < 10_000; i++) kernel(false, true, m, n, k, 1, A, 0, k, B, 0, k, 0, C, 0, n);
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) kernel(false, true, m, n, k, 1, A, 0, k, B, 0, k, 0, C, 0, n);
  return ((performance.now() - t0) * 1000) / reps;
}

const info = blasInfo();
const rows: { layout: Layout; n: number; native: number | null; simd: number | null; portable: number | null }[] = [];
for (const n of sizes) {
  for (const layout of ['NT', 'NN', 'TN'] as Layout[]) {
    const native = info.backend === 'portable' ? null : gflops(sgemm, layout, n, 0.5);
    const simd = simdKernels() ? gflops(sgemmSimd, layout, n, 0.5) : null;
    const portable = n <= portableMax ? gflops(sgemmPortable, layout, n, 0.5) : null;
    rows.push({ layout, n, native, simd, portable });
  }
}

// The reference benchmark step's products (M = 1024 tokens): forward NT, input gradient NN,
// weight gradient TN (M and K swap roles there: dW[out,in] = dYᵀ[out,T] · X[T,in]).
const engineRows: { product: string; layout: Layout; gflops: number }[] = [];
if (values['engine-shapes'] && info.backend !== 'portable') {
  const T = 1024;
  for (const [name, out, inp] of [['qkvo 256→256', 256, 256], ['gate/up 256→1024', 1024, 256], ['down 1024→256', 256, 1024], ['logits 256→2048', 2048, 256]] as [string, number, number][]) {
    engineRows.push({ product: `${name} fwd  ${T}x${out}x${inp}`, layout: 'NT', gflops: gflops(sgemm, 'NT', 0, 0.5, [T, out, inp]) });
    engineRows.push({ product: `${name} dX   ${T}x${inp}x${out}`, layout: 'NN', gflops: gflops(sgemm, 'NN', 0, 0.5, [T, inp, out]) });
    engineRows.push({ product: `${name} dW   ${out}x${inp}x${T}`, layout: 'TN', gflops: gflops(sgemm, 'TN', 0, 0.5, [out, inp, T]) });
  }
}

// Per-call cost: native calls forced at sizes where the dispatcher would route to JS.
const tiny: { shape: string; portableUs: number; nativeUs: number | null }[] = [];
for (const [m, n, k] of [[1, 1, 1], [1, 8, 8], [4, 4, 16], [8, 8, 8], [8, 8, 16], [16, 16, 16], [32, 32, 32]]) {
  tiny.push({
    shape: `${m}x${n}x${k}`,
    portableUs: microseconds(sgemmPortable, m, n, k),
    nativeUs: info.backend === 'portable' ? null : microseconds(sgemmNative, m, n, k),
  });
}

const fmt = (x: number | null): string => (x === null ? '-' : x.toFixed(1));
console.log(`backend ${info.backend}${info.library ? ` (${info.library})` : ''}, ${info.threads} thread(s)`);
console.log('layout     n   native GFLOP/s   WebAssembly SIMD GFLOP/s   JavaScript GFLOP/s');
for (const r of rows) console.log(`${r.layout.padEnd(6)} ${String(r.n).padStart(5)}   ${fmt(r.native).padStart(14)}   ${fmt(r.simd).padStart(24)}   ${fmt(r.portable).padStart(18)}`);
console.log(`tiny products, µs per call (sgemm routes M·N·K <= ${SMALL_PRODUCT_MNK} to the portable kernel):`);
for (const t of tiny) console.log(`  ${t.shape.padEnd(10)} portable ${t.portableUs.toFixed(2)}  native ${t.nativeUs === null ? '-' : t.nativeUs.toFixed(2)}`);
if (engineRows.length > 0) {
  console.log('reference-model products (native):');
  for (const r of engineRows) console.log(`  ${r.product.padEnd(38)} ${r.layout}  ${r.gflops.toFixed(1)} GFLOP/s`);
}
if (values.json) console.log(JSON.stringify({ info, rows, engineRows, tiny }));
