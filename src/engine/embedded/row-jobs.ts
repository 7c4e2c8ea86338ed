// Element-wise and row-wise kernels split across the thread pool (thread-pool.ts): the SwiGLU passes
// over the MLP's activations and the vocabulary log-softmax and its backward. Each part runs the
// ordinary kernel (kernels/*.ts) on a contiguous range of rows (elements, for SwiGLU), so the result
// is the kernel's own whichever thread runs which part. Below MIN_PARALLEL_ELEMENTS, or when an
// operand is not in shared memory, the kernel runs whole in the calling thread.
import { swigluBackward, swigluForward } from './kernels/swiglu.ts';
import { tokenLogprobs, tokenLogprobsBackward } from './kernels/log-softmax.ts';
import { splitBounds } from './gemm-job.ts';
import { poolThreads, runJob } from './thread-pool.ts';
import { JobKind, type DecodedJob, type JobReader, type PoolJob } from './pool-protocol.ts';

type Arr = Float32Array | Int32Array;

/** Kernel ids (their order is the protocol between the threads). */
const Kernel = { SwigluForward: 0, SwigluBackward: 1, TokenLogprobs: 2, TokenLogprobsBackward: 3 } as const;
type Kernel = (typeof Kernel)[keyof typeof Kernel];

const f32 = (a: Arr | null): Float32Array => a as Float32Array;

/** Each kernel on rows [0, rows) of its (already offset) operands; scalars as the caller gave them. */
const KERNELS: ((a: (Arr | null)[], rows: number, s: number[]) => void)[] = [
  (a, n) => swigluForward(f32(a[0]), f32(a[1]), f32(a[2]), n, a[3] as Float32Array | null),
  (a, n) => swigluBackward(f32(a[0]), f32(a[1]), f32(a[2]), f32(a[3]), f32(a[4]), f32(a[5]), n),
  (a, rows, s) => tokenLogprobs(f32(a[0]), rows, s[0]!, a[1] as Int32Array, s[1]!, f32(a[2])),
  (a, rows, s) => tokenLogprobsBackward(f32(a[0]), rows, s[0]!, a[1] as Int32Array, s[1]!, f32(a[2])),
];

/** Below this many elements in the widest operand, splitting costs more than it saves. */
const MIN_PARALLEL_ELEMENTS = 1 << 16;

interface RowsCall {
  kernel: Kernel;
  rows: number;
  arrays: (Arr | null)[];
  /** Elements per row of each array. */
  widths: number[];
  scalars: number[];
}

function part(c: RowsCall, bounds: number[], i: number): void {
  const lo = bounds[i]!, hi = bounds[i + 1]!;
  const views = c.arrays.map((a, j) => (a ? a.subarray(lo * c.widths[j]!, hi * c.widths[j]!) : null));
  KERNELS[c.kernel]!(views, hi - lo, c.scalars);
}

function rowsJob(c: RowsCall, bounds: number[]): PoolJob {
  return {
    kind: JobKind.Rows,
    items: bounds.length - 1,
    arrays: () => c.arrays,
    encode: (w) => {
      w.int(c.kernel);
      w.int(c.arrays.length);
      c.arrays.forEach((a, j) => { w.array(a); w.int(c.widths[j]!); });
      w.int(c.scalars.length);
      for (const s of c.scalars) w.double(s);
      w.int(bounds.length);
      for (const b of bounds) w.int(b);
    },
    run: (i) => part(c, bounds, i),
  };
}

export function decodeRows(r: JobReader): DecodedJob {
  const kernel = r.int() as Kernel;
  const arrays: (Arr | null)[] = [], widths: number[] = [];
  for (let j = 0, n = r.int(); j < n; j++) { arrays.push(r.anyArray()); widths.push(r.int()); }
  const scalars: number[] = [];
  for (let j = 0, n = r.int(); j < n; j++) scalars.push(r.double());
  const bounds: number[] = [];
  for (let j = 0, n = r.int(); j < n; j++) bounds.push(r.int());
  if (!KERNELS[kernel]) throw new Error(`unknown row kernel ${kernel}`);
  const c: RowsCall = { kernel, rows: bounds[bounds.length - 1]!, arrays, widths, scalars };
  return { items: bounds.length - 1, run: (i) => part(c, bounds, i) };
}

/** Runs the kernel over all rows: split across the pool when it is worth it, whole here otherwise. */
function runRows(c: RowsCall, align: number): void {
  const threads = poolThreads();
  const widest = Math.max(...c.widths) * c.rows;
  const bounds = threads > 1 && widest >= MIN_PARALLEL_ELEMENTS ? splitBounds(c.rows, threads, align) : null;
  if (!bounds) {
    KERNELS[c.kernel]!(c.arrays, c.rows, c.scalars);
    return;
  }
  runJob(rowsJob(c, bounds));
}

// Element-wise parts start at multiples of 16 elements: the SIMD kernels then work on each part in place
// (four-lane kernels need lengths that are whole vectors, wasm/simd.ts).
const ELEMENT_ALIGN = 16;

export function swigluForwardRows(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sig: Float32Array | null): void {
  runRows({ kernel: Kernel.SwigluForward, rows: n, arrays: [g, u, h, sig], widths: [1, 1, 1, 1], scalars: [] }, ELEMENT_ALIGN);
}

export function swigluBackwardRows(
  dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number,
): void {
  runRows({ kernel: Kernel.SwigluBackward, rows: n, arrays: [dh, g, u, sig, dg, du], widths: [1, 1, 1, 1, 1, 1], scalars: [] }, ELEMENT_ALIGN);
}

export function tokenLogprobsRows(logits: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, lp: Float32Array): void {
  runRows({ kernel: Kernel.TokenLogprobs, rows, arrays: [logits, tokens, lp], widths: [vocab, 1, 1], scalars: [vocab, temperature] }, 1);
}

export function tokenLogprobsBackwardRows(
  probs: Float32Array, rows: number, vocab: number, tokens: Int32Array, temperature: number, dlp: Float32Array,
): void {
  runRows({ kernel: Kernel.TokenLogprobsBackward, rows, arrays: [probs, tokens, dlp], widths: [vocab, 1, 1], scalars: [vocab, temperature] }, 1);
}
