// A linear layer over packed rows with an optional LoRA branch, and its backward.
//   y[N, out] = x[N, in] · Wᵀ + b + s · (x Aᵀ) Bᵀ
// The LoRA intermediate xa = x Aᵀ [N, rank] is returned so the backward does not recompute it; it comes
// from the buffer pool (shared memory, so its products can be split across threads) and goes back
// with the layer's other activations (decoder-layer.ts releaseLayerActs).
import { sgemm } from './gemm.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';
import type { Param } from './param.ts';
import type { LoraModule } from './lora.ts';

export interface LinearOp {
  W: Param;
  bias: Param | null;
  lora: LoraModule | null;
  scale: number;
}

/** y = x·Wᵀ + b + s·(x Aᵀ) Bᵀ, overwriting y, or adding to it when `accumulate` (residual connections). */
export function linearForward(op: LinearOp, x: Float32Array, N: number, y: Float32Array, accumulate = false): Float32Array | null {
  const [out, inF] = op.W.shape as [number, number];
  sgemm(false, true, N, out, inF, 1, x, 0, inF, op.W.data, 0, inF, accumulate ? 1 : 0, y, 0, out);
  if (op.bias) {
    const b = op.bias.data;
    for (let r = 0; r < N; r++) for (let j = 0, o = r * out; j < out; j++) y[o + j]! += b[j]!;
  }
  if (!op.lora) return null;
  const rank = op.lora.A.shape[0]!;
  const xa = takeBuffer(N * rank);
  sgemm(false, true, N, rank, inF, 1, x, 0, inF, op.lora.A.data, 0, inF, 0, xa, 0, rank);
  sgemm(false, true, N, out, rank, op.scale, xa, 0, rank, op.lora.B.data, 0, rank, 1, y, 0, out);
  return xa;
}

export interface LinearGradTargets {
  /** Accumulate into W.grad and bias.grad. */
  base: boolean;
  /** Accumulate into lora.A.grad and lora.B.grad. */
  lora: boolean;
}

/**
 * dx (when given) = dy · W + s · (dy B) A, overwritten or accumulated; parameter grads accumulate
 * (they must already be allocated for the requested targets).
 */
export function linearBackward(
  op: LinearOp, x: Float32Array, xa: Float32Array | null, dy: Float32Array, N: number,
  dx: Float32Array | null, accumulateDx: boolean, targets: LinearGradTargets,
): void {
  const [out, inF] = op.W.shape as [number, number];
  if (targets.base) {
    sgemm(true, false, out, inF, N, 1, dy, 0, out, x, 0, inF, 1, op.W.grad!, 0, inF);
    if (op.bias) {
      const gb = op.bias.grad!;
      for (let r = 0; r < N; r++) for (let j = 0, o = r * out; j < out; j++) gb[j]! += dy[o + j]!;
    }
  }
  if (dx) sgemm(false, false, N, inF, out, 1, dy, 0, out, op.W.data, 0, inF, accumulateDx ? 1 : 0, dx, 0, inF);
  if (!op.lora || !xa) return;
  const { A, B } = op.lora;
  const rank = A.shape[0]!;
  if (targets.lora) sgemm(true, false, out, rank, N, op.scale, dy, 0, out, xa, 0, rank, 1, B.grad!, 0, rank);
  if (!targets.lora && !dx) return;
  const dxa = takeBuffer(N * rank);
  sgemm(false, false, N, rank, out, op.scale, dy, 0, out, B.data, 0, rank, 0, dxa, 0, rank);
  if (targets.lora) sgemm(true, false, rank, inF, N, 1, dxa, 0, rank, x, 0, inF, 1, A.grad!, 0, inF);
  if (dx) sgemm(false, false, N, inF, rank, 1, dxa, 0, rank, A.data, 0, inF, 1, dx, 0, inF);
  releaseBuffers(dxa);
}
