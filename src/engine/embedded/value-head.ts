// The critic's head on the final normed hidden state: hidden → h1 → … → 1, ReLU between layers
// (a single linear layer hidden → 1 for the LoRA critic). Each layer is torch.nn.Linear, initialised
// as nn.Linear does (W, b ~ U(−1/√in, 1/√in)).
import { sgemm } from './gemm.ts';
import { ensureGrad, param, type Param } from './param.ts';
import { Rng } from './sampling.ts';
import { fillUniform } from './init.ts';

export interface DenseLayer {
  W: Param; // [out, in]
  b: Param; // [out]
}

export interface ValueHead {
  layers: DenseLayer[];
}

export function createValueHead(input: number, hidden: number[], seed: number): ValueHead {
  const rng = new Rng(seed);
  const widths = [input, ...hidden, 1];
  const layers: DenseLayer[] = [];
  for (let i = 0; i + 1 < widths.length; i++) {
    const inF = widths[i]!, out = widths[i + 1]!;
    const bound = 1 / Math.sqrt(inF);
    const W = param([out, inF]), b = param([out]);
    fillUniform(rng, W.data, bound);
    fillUniform(rng, b.data, bound);
    layers.push({ W, b });
  }
  return { layers };
}

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
