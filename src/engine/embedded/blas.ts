// Matrix products for the embedded engine: cblas_sgemm from OpenBLAS (or Apple Accelerate) through
// the koffi FFI package, with a portable JavaScript kernel when no BLAS library can be loaded
// (docs/architecture.md; issue 2, item 8).
//
// Semantics are those of cblas_sgemm(CblasRowMajor, ...):
//   C[M,N] = alpha · op(A)[M,K] · op(B)[K,N] + beta · C[M,N]
// with op(X) = X or Xᵀ, leading dimensions lda/ldb/ldc in elements, and offsets (in elements) into
// the Float32Arrays. Typed arrays are handed to C in place (koffi passes their memory as the
// pointer, no copy); an offset becomes a subarray view.
//
// One threading layer: the engine's thread pool (thread-pool.ts) splits large products across
// threads and holds OpenBLAS at one thread meanwhile; without a pool, OpenBLAS's own threads (every
// core, or OPENBLAS_NUM_THREADS when set) do the splitting. This file is the single-threaded kernel
// either way; gemm.ts is the entry point that splits. MARFT_BLAS=portable forces the JavaScript kernel (tests use
// it to compare both paths); MARFT_BLAS_LIB=/path/lib.so tries only that library;
// MARFT_BLAS_PROFILE=1 prints time per product shape at exit.

import { createRequire } from 'node:module';
import { simdKernels } from './wasm/simd.ts';
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';

export type BlasBackend = 'openblas' | 'accelerate' | 'portable';

export interface BlasInfo {
  backend: BlasBackend;
  threads: number;
  /** The shared library cblas_sgemm was loaded from. */
  library?: string;
}

// cblas enums (cblas.h).
const CBLAS_ROW_MAJOR = 101;
const CBLAS_NO_TRANS = 111;
const CBLAS_TRANS = 112;

/**
 * Products with M·N·K (multiply-adds) at or below this run in JavaScript even when BLAS is loaded: below it the
 * FFI call (about 0.3-2 µs through koffi, see docs/performance.md "Matrix kernel") costs more
 * than the arithmetic.
 */
export const SMALL_PRODUCT_MNK = 512;

/**
 * Without BLAS, products above this many multiply-adds run in the WebAssembly SIMD kernel
 * (wasm/simd.ts), smaller ones in the JavaScript loops (packing panels costs more than it saves there).
 */
const SIMD_PRODUCT_MNK = 4096;

type NativeSgemm = (
  order: number, transA: number, transB: number, M: number, N: number, K: number,
  alpha: number, A: Float32Array, lda: number, B: Float32Array, ldb: number,
  beta: number, C: Float32Array, ldc: number,
) => void;

interface Backend {
  info: BlasInfo;
  native: NativeSgemm | null;
  /** openblas_set_num_threads, when the library has it. */
  setThreads: ((n: number) => void) | null;
  /** openblas_get_num_threads, when the library has it. */
  getThreads: (() => number) | null;
}

let backend: Backend | null = null;

function candidateLibraries(): { path: string; kind: BlasBackend }[] {
  const out: { path: string; kind: BlasBackend }[] = [];
  const explicit = process.env.MARFT_BLAS_LIB;
  if (explicit) return [{ path: explicit, kind: /accelerate/i.test(explicit) ? 'accelerate' : 'openblas' }];
  if (process.platform === 'darwin') {
    out.push({ path: '/System/Library/Frameworks/Accelerate.framework/Accelerate', kind: 'accelerate' });
    out.push({ path: '/opt/homebrew/opt/openblas/lib/libopenblas.dylib', kind: 'openblas' });
    out.push({ path: '/usr/local/opt/openblas/lib/libopenblas.dylib', kind: 'openblas' });
  } else {
    for (const p of ['libopenblas.so.0', 'libopenblas.so', 'libcblas.so.3', 'libblas.so.3']) out.push({ path: p, kind: 'openblas' });
  }
  return out;
}

function loadBackend(): Backend {
  if ((process.env.MARFT_BLAS ?? '').toLowerCase() === 'portable') {
    return { info: { backend: 'portable', threads: 1 }, native: null, setThreads: null, getThreads: null };
  }
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi');
  } catch (e) {
    return portableWithNotice(`the koffi package did not load: ${(e as Error).message.split('\n')[0]}`);
  }
  const tried: string[] = [];
  for (const cand of candidateLibraries()) {
    let lib: ReturnType<typeof koffi.load>;
    try {
      lib = koffi.load(cand.path);
    } catch {
      tried.push(cand.path);
      continue;
    }
    let native: NativeSgemm;
    try {
      native = lib.func(
        'void cblas_sgemm(int order, int transA, int transB, int M, int N, int K, float alpha, void *A, int lda, void *B, int ldb, float beta, void *C, int ldc)',
      ) as unknown as NativeSgemm;
    } catch {
      tried.push(`${cand.path} (no cblas_sgemm)`);
      continue;
    }
    const { threads, setThreads, getThreads } = configureThreads(lib, cand.kind);
    const kind: BlasBackend = cand.kind === 'accelerate' ? 'accelerate' : 'openblas';
    return { info: { backend: kind, threads, library: cand.path }, native, setThreads, getThreads };
  }
  return portableWithNotice(`tried ${tried.join(', ')}`);
}

/**
 * Sets OpenBLAS's thread count (all cores unless OPENBLAS_NUM_THREADS says otherwise) and reports it;
 * the thread pool lowers it to one when it starts (thread-pool.ts). Only the main thread sets it:
 * the count is global to the process, and the pool's workers call sgemm from their own threads.
 */
function configureThreads(
  lib: { func(def: string): unknown }, kind: BlasBackend,
): { threads: number; setThreads: ((n: number) => void) | null; getThreads: (() => number) | null } {
  const cores = availableParallelism();
  if (kind === 'accelerate') return { threads: cores, setThreads: null, getThreads: null };
  if (!isMainThread) return { threads: 1, setThreads: null, getThreads: null };
  let get: (() => number) | null = null;
  let set: ((n: number) => void) | null = null;
  try { get = lib.func('int openblas_get_num_threads()') as () => number; } catch { get = null; }
  try { set = lib.func('void openblas_set_num_threads(int n)') as (n: number) => void; } catch { set = null; }
  const requested = Number.parseInt(process.env.OPENBLAS_NUM_THREADS ?? process.env.OMP_NUM_THREADS ?? '', 10);
  const wanted = Number.isFinite(requested) && requested > 0 ? requested : cores;
  if (set) set(wanted);
  return { threads: get ? get() : wanted, setThreads: set, getThreads: get };
}

function portableWithNotice(why: string): Backend {
  // Measured on the reference training step against two OpenBLAS threads (docs/performance.md):
  // the WebAssembly SIMD kernel ~5x slower, the JavaScript loops 40-100x.
  const slower = simdKernels() ? '~5x' : '~50x';
  process.stderr.write(
    `marft: no BLAS found (${why}); using the portable matrix kernel, expect ${slower} slower training. Install libopenblas0-pthread (scripts/setup.sh).\n`,
  );
  return { info: { backend: 'portable', threads: 1 }, native: null, setThreads: null, getThreads: null };
}

function getBackend(): Backend {
  if (backend === null) backend = loadBackend();
  return backend;
}

/** Which matrix kernel is in use (loads it on first call). */
export function blasInfo(): BlasInfo {
  return { ...getBackend().info };
}

/**
 * Runs `fn` with OpenBLAS on one thread, then restores the configured count. For runs of many
 * small products separated by JavaScript work (attention's per-head products): waking the second
 * thread for each one costs more than it saves (in the reference training step, 128×128×64 products
 * ran at 33-47 GFLOP/s on two threads and 64-70 on one; docs/performance.md).
 */
export function withOneBlasThread<T>(fn: () => T): T {
  const b = getBackend();
  if (!b.setThreads || b.info.threads <= 1) return fn();
  b.setThreads(1);
  try {
    return fn();
  } finally {
    b.setThreads(b.info.threads);
  }
}

/**
 * Sets the thread count OpenBLAS uses from now on (the thread pool sets 1 while it does the threading
 * itself, thread-pool.ts). No effect without OpenBLAS's thread controls (Accelerate, the portable kernel).
 */
export function setBlasThreads(n: number): void {
  const b = getBackend();
  if (!b.setThreads) return;
  b.setThreads(n);
  b.info.threads = b.getThreads ? b.getThreads() : n;
}

/** The thread count OpenBLAS uses right now (blasInfo().threads is the configured one); null when it cannot say. */
export function blasThreadsNow(): number | null {
  const get = getBackend().getThreads;
  return get ? get() : null;
}

/** Row-major cblas_sgemm; see the file header. */
export function sgemm(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  if (M <= 0 || N <= 0) return;
  checkOperands(transA, transB, M, N, K, A, aOffset, lda, B, bOffset, ldb, C, cOffset, ldc);
  if (profile !== null) {
    const t0 = performance.now();
    dispatch(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
    record(transA, transB, M, N, K, performance.now() - t0);
    return;
  }
  dispatch(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
}

function dispatch(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  const native = getBackend().native;
  if (native !== null && M * N * K > SMALL_PRODUCT_MNK) {
    callNative(native, transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
    return;
  }
  const simd = native === null && M * N * K > SIMD_PRODUCT_MNK ? simdKernels() : null;
  if (simd) {
    scaleByBeta(beta, M, N, C, cOffset, ldc);
    simd.sgemm(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, C, cOffset, ldc);
    return;
  }
  sgemmPortable(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
}

// MARFT_BLAS_PROFILE=1: time every product, grouped by layout and shape, and print the table
// (sorted by total time) to stderr at exit. For finding which products dominate a step.
const profile: Map<string, { calls: number; ms: number; flops: number }> | null =
  process.env.MARFT_BLAS_PROFILE === '1' ? new Map() : null;
if (profile !== null) process.on('exit', () => printProfile(profile));

function record(transA: boolean, transB: boolean, M: number, N: number, K: number, ms: number): void {
  const key = `${transA ? 'T' : 'N'}${transB ? 'T' : 'N'} ${M}x${N}x${K}`;
  const e = profile!.get(key) ?? { calls: 0, ms: 0, flops: 0 };
  e.calls++;
  e.ms += ms;
  e.flops += 2 * M * N * K;
  profile!.set(key, e);
}

function printProfile(p: Map<string, { calls: number; ms: number; flops: number }>): void {
  const rows = [...p.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((s, [, e]) => s + e.ms, 0);
  const lines = [`marft: sgemm profile (${blasInfo().backend}, ${blasInfo().threads} threads): ${total.toFixed(0)} ms in ${rows.reduce((s, [, e]) => s + e.calls, 0)} calls`];
  for (const [key, e] of rows.slice(0, 30)) {
    lines.push(`  ${key.padEnd(22)} ${String(e.calls).padStart(7)} calls ${e.ms.toFixed(1).padStart(9)} ms ${(e.flops / (e.ms * 1e6)).toFixed(1).padStart(7)} GFLOP/s`);
  }
  process.stderr.write(lines.join('\n') + '\n');
}

/** The WebAssembly SIMD kernel on its own, whatever the size (tests compare it with the reference); throws without WebAssembly SIMD. */
export function sgemmSimd(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  const simd = simdKernels();
  if (simd === null) throw new Error('sgemmSimd: the WebAssembly SIMD kernels are not available');
  checkOperands(transA, transB, M, N, K, A, aOffset, lda, B, bOffset, ldb, C, cOffset, ldc);
  if (M <= 0 || N <= 0) return;
  scaleByBeta(beta, M, N, C, cOffset, ldc);
  simd.sgemm(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, C, cOffset, ldc);
}

/** The native BLAS call whatever the size (benchmarks measure the FFI cost with it); throws without BLAS. */
export function sgemmNative(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  const native = getBackend().native;
  if (native === null) throw new Error('sgemmNative: no BLAS library is loaded');
  checkOperands(transA, transB, M, N, K, A, aOffset, lda, B, bOffset, ldb, C, cOffset, ldc);
  callNative(native, transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
}

/** cblas_sgemm in row-major layout; offsets become views, so the arrays are passed without copying. */
function callNative(
  native: NativeSgemm, transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  native(
    CBLAS_ROW_MAJOR, transA ? CBLAS_TRANS : CBLAS_NO_TRANS, transB ? CBLAS_TRANS : CBLAS_NO_TRANS, M, N, K,
    alpha, aOffset === 0 ? A : A.subarray(aOffset), lda, bOffset === 0 ? B : B.subarray(bOffset), ldb,
    beta, cOffset === 0 ? C : C.subarray(cOffset), ldc,
  );
}

/** Bounds and leading-dimension checks: BLAS would read or write out of bounds silently. */
function checkOperands(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  A: Float32Array, aOffset: number, lda: number, B: Float32Array, bOffset: number, ldb: number,
  C: Float32Array, cOffset: number, ldc: number,
): void {
  // Stored shapes (rows × cols) of A, B, C in row-major order.
  const aRows = transA ? K : M, aCols = transA ? M : K;
  const bRows = transB ? N : K, bCols = transB ? K : N;
  const need = (name: string, arr: Float32Array, off: number, rows: number, cols: number, ld: number): void => {
    if (ld < Math.max(1, cols)) throw new Error(`sgemm: ld${name}=${ld} < ${cols} columns of ${name}`);
    if (rows === 0 || cols === 0) return;
    const last = off + (rows - 1) * ld + cols;
    if (off < 0 || last > arr.length) {
      throw new Error(`sgemm: ${name} needs ${last} elements from offset ${off}, has ${arr.length}`);
    }
  };
  need('a', A, aOffset, aRows, aCols, lda);
  need('b', B, bOffset, bRows, bCols, ldb);
  need('c', C, cOffset, M, N, ldc);
}

// ---------------------------------------------------------------------------------------------
// Portable kernel. Operands in transposed storage are first packed into row-major scratch
// buffers (O(MK + KN) work against O(MNK)), then one i-k-j kernel blocked over k and j runs on
// contiguous rows, four rows of C at a time so each loaded element of B feeds four products.

let scratchA = new Float32Array(0);
let scratchB = new Float32Array(0);

const BLOCK_K = 64;
const BLOCK_N = 256;

/** C ← beta · C over an M × N block (beta = 0 overwrites, so NaNs in an uninitialised C do not leak, as in BLAS). */
function scaleByBeta(beta: number, M: number, N: number, C: Float32Array, cOffset: number, ldc: number): void {
  for (let i = 0; i < M; i++) {
    const row = cOffset + i * ldc;
    if (beta === 0) C.fill(0, row, row + N);
    else if (beta !== 1) for (let j = row; j < row + N; j++) C[j]! *= beta;
  }
}

/** The portable kernel on its own (tests compare it with the native path). */
export function sgemmPortable(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  scaleByBeta(beta, M, N, C, cOffset, ldc);
  if (K <= 0 || alpha === 0) return;

  let a = A, aOff = aOffset, aLd = lda;
  if (transA) {
    if (scratchA.length < M * K) scratchA = new Float32Array(M * K);
    transposeInto(A, aOffset, lda, K, M, scratchA);
    a = scratchA; aOff = 0; aLd = K;
  }
  let b = B, bOff = bOffset, bLd = ldb;
  if (transB) {
    if (scratchB.length < K * N) scratchB = new Float32Array(K * N);
    transposeInto(B, bOffset, ldb, N, K, scratchB);
    b = scratchB; bOff = 0; bLd = N;
  }
  kernelNN(M, N, K, alpha, a, aOff, aLd, b, bOff, bLd, C, cOffset, ldc);
}

/** dst[c, r] = src[off + r·ld + c] for a rows × cols source; dst is cols × rows, contiguous. */
function transposeInto(src: Float32Array, off: number, ld: number, rows: number, cols: number, dst: Float32Array): void {
  for (let r = 0; r < rows; r++) {
    const s = off + r * ld;
    for (let c = 0; c < cols; c++) dst[c * rows + r] = src[s + c];
  }
}

/** C[M,N] += alpha · A[M,K] · B[K,N], all row-major with the given leading dimensions. */
function kernelNN(
  M: number, N: number, K: number, alpha: number,
  A: Float32Array, aOff: number, lda: number, B: Float32Array, bOff: number, ldb: number,
  C: Float32Array, cOff: number, ldc: number,
): void {
  for (let k0 = 0; k0 < K; k0 += BLOCK_K) {
    const k1 = Math.min(K, k0 + BLOCK_K);
    for (let j0 = 0; j0 < N; j0 += BLOCK_N) {
      const j1 = Math.min(N, j0 + BLOCK_N);
      let i = 0;
      for (; i + 4 <= M; i += 4) {
        const c0 = cOff + i * ldc, c1 = c0 + ldc, c2 = c1 + ldc, c3 = c2 + ldc;
        const a0 = aOff + i * lda, a1 = a0 + lda, a2 = a1 + lda, a3 = a2 + lda;
        for (let k = k0; k < k1; k++) {
          const x0 = alpha * A[a0 + k], x1 = alpha * A[a1 + k], x2 = alpha * A[a2 + k], x3 = alpha * A[a3 + k];
          const bRow = bOff + k * ldb;
          for (let j = j0; j < j1; j++) {
            const bv = B[bRow + j];
            C[c0 + j] += x0 * bv;
            C[c1 + j] += x1 * bv;
            C[c2 + j] += x2 * bv;
            C[c3 + j] += x3 * bv;
          }
        }
      }
      for (; i < M; i++) {
        const c0 = cOff + i * ldc, a0 = aOff + i * lda;
        for (let k = k0; k < k1; k++) {
          const x0 = alpha * A[a0 + k];
          const bRow = bOff + k * ldb;
          for (let j = j0; j < j1; j++) C[c0 + j] += x0 * B[bRow + j];
        }
      }
    }
  }
}
