// A trainable tensor: its values, its gradient (allocated only while it is being trained), its shape.
// Both live in shared memory, so that products over them can be split across threads (thread-pool.ts).
import { sharedFloats, toShared } from '../shareable-arrays.ts';
export interface Param {
  shape: number[];
  data: Float32Array;
  grad: Float32Array | null;
}

export function param(shape: number[], data?: Float32Array): Param {
  const size = shape.reduce((a, b) => a * b, 1);
  if (data && data.length !== size) throw new Error(`tensor of shape [${shape.join(', ')}] needs ${size} values, got ${data.length}`);
  return { shape, data: data ? toShared(data) : sharedFloats(size), grad: null };
}

export function ensureGrad(p: Param): Float32Array {
  if (!p.grad) p.grad = sharedFloats(p.data.length);
  return p.grad;
}
