import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { sgemm, sgemmPortable, sgemmSimd, blasInfo, blasThreadsNow, withOneBlasThread, SMALL_PRODUCT_MNK } from './blas.ts';

/** Deterministic values in [-1, 1) (a small LCG; the test must not depend on Math.random). */
function filled(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** Naive row-major reference in float64. */
function reference(
  tA: boolean, tB: boolean, M: number, N: number, K: number, alpha: number,
  A: Float32Array, aOff: number, lda: number, B: Float32Array, bOff: number, ldb: number,
  beta: number, C: Float32Array, cOff: number, ldc: number,
): Float64Array {
  const out = Float64Array.from(C);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) {
        const a = tA ? A[aOff + k * lda + i] : A[aOff + i * lda + k];
        const b = tB ? B[bOff + j * ldb + k] : B[bOff + k * ldb + j];
        s += a * b;
      }
      const idx = cOff + i * ldc + j;
      out[idx] = alpha * s + (beta === 0 ? 0 : beta * C[idx]);
    }
  }
  return out;
}

type Kernel = typeof sgemm;

function checkCase(kernel: Kernel, tA: boolean, tB: boolean, M: number, N: number, K: number, alpha: number, beta: number, seed: number): void {
  // Leading dimensions larger than the stored width and non-zero offsets, as the engine uses them.
  const aOff = 3, bOff = 5, cOff = 7;
  const lda = (tA ? M : K) + 2, ldb = (tB ? K : N) + 1, ldc = N + 3;
  const A = filled(aOff + (tA ? K : M) * lda, seed);
  const B = filled(bOff + (tB ? N : K) * ldb, seed + 1);
  const C = filled(cOff + M * ldc, seed + 2);
  const want = reference(tA, tB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc);
  kernel(tA, tB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc);
  for (let idx = 0; idx < C.length; idx++) {
    const tol = 1e-5 * Math.max(1, K) + 1e-6 * Math.abs(want[idx]);
    if (Math.abs(C[idx] - want[idx]) > tol) {
      assert.fail(`tA=${tA} tB=${tB} M=${M} N=${N} K=${K} alpha=${alpha} beta=${beta}: C[${idx}] = ${C[idx]}, want ${want[idx]}`);
    }
  }
}

// Includes shapes past the SIMD kernel's panels (64 rows, 256 columns, 256 of K) and not multiples of its 4 × 8 blocks.
const SHAPES: [number, number, number][] = [[1, 1, 1], [3, 5, 7], [17, 13, 9], [33, 65, 31], [64, 1, 130], [1, 70, 45], [130, 67, 129], [6, 300, 70], [67, 260, 300]];
const SCALARS: [number, number][] = [[1, 0], [0.5, 1], [-1.25, 0.75]];

for (const [name, kernel] of [['sgemm (dispatching)', sgemm], ['sgemmPortable', sgemmPortable], ['sgemmSimd (WebAssembly, no BLAS)', sgemmSimd]] as [string, Kernel][]) {
  test(`${name} matches a naive reference: all transposes, odd sizes, offsets, ld > width, alpha/beta`, () => {
    let seed = 1;
    for (const tA of [false, true]) for (const tB of [false, true]) {
      for (const [M, N, K] of SHAPES) for (const [alpha, beta] of SCALARS) checkCase(kernel, tA, tB, M, N, K, alpha, beta, seed++);
    }
  });
}

test('sgemm with beta = 0 overwrites NaN in C, and K = 0 leaves beta·C', () => {
  for (const kernel of [sgemm, sgemmPortable, sgemmSimd]) {
    const A = filled(40 * 40, 9), B = filled(40 * 40, 10);
    const C = new Float32Array(40 * 40).fill(NaN);
    kernel(false, false, 40, 40, 40, 1, A, 0, 40, B, 0, 40, 0, C, 0, 40);
    assert.ok(C.every(Number.isFinite));
    const C2 = new Float32Array([1, 2, 3, 4]);
    kernel(false, false, 2, 2, 0, 1, A, 0, 1, B, 0, 2, 0.5, C2, 0, 2);
    assert.deepEqual([...C2], [0.5, 1, 1.5, 2]);
  }
});

test('sgemm rejects operands too short for the given shape', () => {
  const A = new Float32Array(6), B = new Float32Array(6), C = new Float32Array(3);
  assert.throws(() => sgemm(false, false, 2, 2, 3, 1, A, 0, 3, B, 0, 2, 0, C, 0, 2), /c needs 4 elements/);
  assert.throws(() => sgemm(false, false, 2, 2, 3, 1, A, 0, 2, B, 0, 2, 0, new Float32Array(4), 0, 2), /lda=2 < 3/);
});

test('blasInfo reports the native backend (OpenBLAS is installed by scripts/setup.sh) and MARFT_BLAS=portable forces the JS kernel', () => {
  const info = blasInfo();
  assert.ok(['openblas', 'accelerate', 'portable'].includes(info.backend));
  assert.ok(info.threads >= 1);
  if (process.env.MARFT_BLAS !== 'portable') {
    assert.notEqual(info.backend, 'portable', 'no BLAS library loaded; run scripts/setup.sh');
    assert.ok(SMALL_PRODUCT_MNK < 64 * 64 * 64);
  }
  const script = "import { blasInfo, sgemm } from './src/engine/embedded/blas.ts'; const c = new Float32Array(4); sgemm(false, false, 2, 2, 1, 1, new Float32Array([1, 2]), 0, 1, new Float32Array([3, 4]), 0, 2, 0, c, 0, 2); console.log(JSON.stringify({ info: blasInfo(), c: [...c] }));";
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, MARFT_BLAS: 'portable' }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim());
  assert.equal(out.info.backend, 'portable');
  assert.deepEqual(out.c, [3, 4, 6, 8]);
  assert.equal(r.stderr, '', 'forcing the portable kernel is not a missing-BLAS notice');
});

test('a missing BLAS prints the one-line notice once and still computes', () => {
  const script = "import { blasInfo, sgemm } from './src/engine/embedded/blas.ts'; const c = new Float32Array(4); for (let i = 0; i < 3; i++) sgemm(false, true, 2, 2, 1, 1, new Float32Array([1, 2]), 0, 1, new Float32Array([3, 4]), 0, 1, 0, c, 0, 2); console.log(JSON.stringify({ info: blasInfo(), c: [...c] }));";
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, MARFT_BLAS: '', MARFT_BLAS_LIB: '/nonexistent/libnothing.so' }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim());
  assert.deepEqual(out.c, [3, 4, 6, 8]);
  assert.equal(out.info.backend, 'portable');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^marft: no BLAS found \(tried \/nonexistent\/libnothing\.so\); using the portable matrix kernel/);
});

test('withOneBlasThread runs its function on one OpenBLAS thread and restores the configured count, also after a throw', () => {
  const configured = blasInfo().threads;
  if (blasThreadsNow() === null || configured < 2) return; // one core, or a library without the thread calls
  assert.equal(blasThreadsNow(), configured);
  assert.equal(withOneBlasThread(() => blasThreadsNow()), 1);
  assert.equal(blasThreadsNow(), configured);
  assert.throws(() => withOneBlasThread(() => { throw new Error('inside'); }), /inside/);
  assert.equal(blasThreadsNow(), configured);
});
