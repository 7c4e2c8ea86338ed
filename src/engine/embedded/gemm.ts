// The one matrix-product entry point of the kernels. Products of at least PARALLEL_MIN_MACS
// multiply-adds are cut into one part per thread of the engine's pool (gemm-job.ts, thread-pool.ts);
// the rest, and every product when there is no pool, go straight to blas.ts (OpenBLAS through koffi,
// or the portable kernel), with cblas_sgemm's row-major semantics. Every product here, however small,
// first settles OpenBLAS's thread count for the process (thread-pool.ts settleBlasThreads): a product
// must round the same in a process's first pass as in its later ones.
import { sgemm as blasSgemm } from './blas.ts';
import { gemmJob } from './gemm-job.ts';
import { poolThreads, runJob, settleBlasThreads } from './thread-pool.ts';

/**
 * Below this many multiply-adds a product stays on one thread: waking a worker and the second copy of
 * the shared operand's packing cost more than the split saves (about 20 µs of work on one core).
 */
export const PARALLEL_MIN_MACS = 1 << 21;

export function sgemm(
  transA: boolean, transB: boolean, M: number, N: number, K: number,
  alpha: number, A: Float32Array, aOffset: number, lda: number,
  B: Float32Array, bOffset: number, ldb: number,
  beta: number, C: Float32Array, cOffset: number, ldc: number,
): void {
  if (M * N * K >= PARALLEL_MIN_MACS) {
    const threads = poolThreads();
    const job = threads > 1
      ? gemmJob({ transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc }, threads)
      : null;
    if (job) {
      runJob(job);
      return;
    }
  }
  settleBlasThreads();
  blasSgemm(transA, transB, M, N, K, alpha, A, aOffset, lda, B, bOffset, ldb, beta, C, cOffset, ldc);
}
