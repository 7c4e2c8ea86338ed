// One matrix product split across threads (thread-pool.ts): C's rows, or its columns when it is
// wider than tall, cut into one part per thread at multiples of 16 (whole micro-tiles of the BLAS
// kernels). Each part is an ordinary single-threaded cblas_sgemm on views of the same operands, and
// each element of C comes from exactly one part, over the full K in the same order, so the result
// does not depend on which thread runs which part, nor on whether the workers run at all (the
// calling thread then runs every part itself).
import { sgemm } from './blas.ts';
import { JobKind, type DecodedJob, type JobReader, type PoolJob } from './pool-protocol.ts';

export interface GemmArgs {
  transA: boolean; transB: boolean; M: number; N: number; K: number;
  alpha: number; A: Float32Array; aOffset: number; lda: number;
  B: Float32Array; bOffset: number; ldb: number;
  beta: number; C: Float32Array; cOffset: number; ldc: number;
}

/** Parts of a product start at multiples of this many rows or columns. */
const PART_ALIGN = 16;

/**
 * Boundaries of up to `parts` parts of [0, extent) (length parts + 1), each starting at a multiple of
 * `align` and at least `align` long; null when it cannot be split in two.
 */
export function splitBounds(extent: number, parts: number, align = PART_ALIGN): number[] | null {
  const n = Math.min(parts, Math.floor(extent / align));
  if (n < 2) return null;
  const bounds = [0];
  for (let i = 1; i < n; i++) bounds.push(Math.floor((extent * i) / n / align) * align);
  bounds.push(extent);
  return bounds;
}

/** Runs part i: rows (byRows) or columns [bounds[i], bounds[i+1]) of C. */
function runPart(g: GemmArgs, byRows: boolean, bounds: number[], i: number): void {
  const lo = bounds[i]!, hi = bounds[i + 1]!;
  if (byRows) {
    // Rows lo…hi of op(A): rows of A, or columns when A is stored transposed.
    const aOff = g.aOffset + (g.transA ? lo : lo * g.lda);
    sgemm(g.transA, g.transB, hi - lo, g.N, g.K, g.alpha, g.A, aOff, g.lda, g.B, g.bOffset, g.ldb, g.beta, g.C, g.cOffset + lo * g.ldc, g.ldc);
  } else {
    // Columns lo…hi of op(B): columns of B, or rows when B is stored transposed.
    const bOff = g.bOffset + (g.transB ? lo * g.ldb : lo);
    sgemm(g.transA, g.transB, g.M, hi - lo, g.K, g.alpha, g.A, g.aOffset, g.lda, g.B, bOff, g.ldb, g.beta, g.C, g.cOffset + lo, g.ldc);
  }
}

/** The product as a pool job of up to `parts` parts, or null when it is too narrow to split. */
export function gemmJob(g: GemmArgs, parts: number): PoolJob | null {
  const byRows = g.M >= g.N;
  const bounds = splitBounds(byRows ? g.M : g.N, parts);
  if (!bounds) return null;
  return {
    kind: JobKind.Gemm,
    items: bounds.length - 1,
    arrays: () => [g.A, g.B, g.C],
    encode: (w) => {
      w.int(g.transA ? 1 : 0); w.int(g.transB ? 1 : 0); w.int(g.M); w.int(g.N); w.int(g.K);
      w.float(g.alpha); w.array(g.A); w.int(g.aOffset); w.int(g.lda);
      w.array(g.B); w.int(g.bOffset); w.int(g.ldb);
      w.float(g.beta); w.array(g.C); w.int(g.cOffset); w.int(g.ldc);
      w.int(byRows ? 1 : 0); w.int(bounds.length);
      for (const b of bounds) w.int(b);
    },
    run: (i) => runPart(g, byRows, bounds, i),
  };
}

export function decodeGemm(r: JobReader): DecodedJob {
  const transA = r.int() === 1, transB = r.int() === 1, M = r.int(), N = r.int(), K = r.int();
  const alpha = r.float(), A = r.need('A'), aOffset = r.int(), lda = r.int();
  const B = r.need('B'), bOffset = r.int(), ldb = r.int();
  const beta = r.float(), C = r.need('C'), cOffset = r.int(), ldc = r.int();
  const byRows = r.int() === 1;
  const bounds: number[] = [];
  for (let i = 0, n = r.int(); i < n; i++) bounds.push(r.int());
  const g: GemmArgs = { transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc };
  return { items: bounds.length - 1, run: (i) => runPart(g, byRows, bounds, i) };
}
