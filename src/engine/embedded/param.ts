// A trainable tensor: its values, its gradient (allocated only while it is being trained), its shape.
export interface Param {
  shape: number[];
  data: Float32Array;
  grad: Float32Array | null;
}

export function param(shape: number[], data?: Float32Array): Param {
  const size = shape.reduce((a, b) => a * b, 1);
  if (data && data.length !== size) throw new Error(`tensor of shape [${shape.join(', ')}] needs ${size} values, got ${data.length}`);
  return { shape, data: data ?? new Float32Array(size), grad: null };
}

export function ensureGrad(p: Param): Float32Array {
  if (!p.grad) p.grad = new Float32Array(p.data.length);
  return p.grad;
}
