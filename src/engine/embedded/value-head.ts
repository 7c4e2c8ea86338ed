// The critic's head on the final normed hidden state, hidden → h1 → … → 1 with ReLU between layers (a
// single linear layer hidden → 1 for the LoRA critic), in the embedded engine: the engine-level head
// (../trainables.ts, with its torch.nn.Linear initialiser) held in this engine's parameters, and its
// forward and backward passes.
import { sgemm } from './gemm.ts';
import { ensureGrad, type Param } from './param.ts';
import type { DenseLayer as DenseLayerOf, ValueHead as ValueHeadOf } from '../trainables.ts';

export type DenseLayer = DenseLayerOf<Param>;
export type ValueHead = ValueHeadOf<Param>;

export function valueHeadParams(h: ValueHead): Param[] {
  return h.layers.flatMap((l) => [l.W, l.b]);
}

export interface ValueHeadPass {
  /** Input of each layer (after the previous ReLU), [M, in]. */
  inputs: Float32Array[];
  values: Float32Array;
}

/** x [M, hidden] → values [M]. */
export function valueHeadForward(h: ValueHead, x: Float32Array, M: number): ValueHeadPass {
  const inputs: Float32Array[] = [];
  let cur = x;
  h.layers.forEach((l, i) => {
    const [out, inF] = l.W.shape as [number, number];
    inputs.push(cur);
    const y = new Float32Array(M * out);
    sgemm(false, true, M, out, inF, 1, cur, 0, inF, l.W.data, 0, inF, 0, y, 0, out);
    for (let r = 0; r < M; r++) for (let j = 0; j < out; j++) {
      const z = y[r * out + j]! + l.b.data[j]!;
      y[r * out + j] = i + 1 < h.layers.length && z < 0 ? 0 : z;
    }
    cur = y;
  });
  return { inputs, values: cur };
}

/** dValues [M] → head grads (accumulated); returns dL/dx [M, hidden] when wanted. */
export function valueHeadBackward(h: ValueHead, pass: ValueHeadPass, dValues: Float32Array, M: number, wantDx: boolean): Float32Array | null {
  let dy = dValues;
  for (let i = h.layers.length - 1; i >= 0; i--) {
    const l = h.layers[i]!;
    const [out, inF] = l.W.shape as [number, number];
    const x = pass.inputs[i]!;
    sgemm(true, false, out, inF, M, 1, dy, 0, out, x, 0, inF, 1, ensureGrad(l.W), 0, inF);
    const gb = ensureGrad(l.b);
    for (let r = 0; r < M; r++) for (let j = 0; j < out; j++) gb[j]! += dy[r * out + j]!;
    if (i === 0 && !wantDx) return null;
    const dx = new Float32Array(M * inF);
    sgemm(false, false, M, inF, out, 1, dy, 0, out, l.W.data, 0, inF, 0, dx, 0, inF);
    // ReLU of the previous layer: x = relu(z), so the gradient passes where x > 0.
    if (i > 0) for (let k = 0; k < dx.length; k++) if (x[k]! <= 0) dx[k] = 0;
    dy = dx;
  }
  return dy;
}
