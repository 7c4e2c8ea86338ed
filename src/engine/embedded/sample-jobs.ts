// A decoding step's draws over the vocabulary split across the thread pool (thread-pool.ts): one item
// per sequence, each the whole of drawToken (sampling.ts: the maximum, the filtered probabilities,
// the inverse-CDF draw) on its row of the logits. The calling thread first draws every sequence's
// uniform from the sequence's own generator, in turn, so the generators advance exactly as in
// sampleToken and the tokens and log-probs are the same whichever thread draws which row. At batch
// 32 on SmolLM2 these draws (32 × 49,152 exponentials) were 16% of the calling thread's time while
// the pool's worker waited (docs/performance.md, "Decoding's attention").
import { drawToken, type SampledToken, type SamplingParams } from './sampling.ts';
import { runJob } from './thread-pool.ts';
import { JobKind, type DecodedJob, type JobReader, type PoolJob } from './pool-protocol.ts';

// Float64 slots in shared memory: per row its uniform, then its token and log-prob (kept as doubles,
// as sampleToken returns them). Grown as needed and reused: a new shared buffer per step would stay
// registered with the workers until their collectors let go of it. Jobs are synchronous, so one suffices.
let slots = new Float64Array(new SharedArrayBuffer(8 * 3 * 64));

/** A token the item could not draw (its logits were invalid): the calling thread redraws it to throw. */
const FAILED = -1;

function runItem(logits: Float32Array, V: number, params: SamplingParams, d: Float64Array, rows: number, i: number): void {
  try {
    const { token, logprob } = drawToken(logits.subarray(i * V, (i + 1) * V), params, d[i]!);
    d[rows + 2 * i] = token;
    d[rows + 2 * i + 1] = logprob;
  } catch {
    d[rows + 2 * i] = FAILED;
  }
}

/**
 * The token and its log-prob for each of `rows` rows of logits [rows, V] (shared memory, e.g. from
 * takeBuffer), row i drawn with uniform uniforms[i] (ignored at temperature 0): drawToken per row.
 */
export function drawTokens(logits: Float32Array, rows: number, V: number, params: SamplingParams, uniforms: number[]): SampledToken[] {
  if (slots.length < 3 * rows) slots = new Float64Array(new SharedArrayBuffer(8 * 3 * Math.max(rows, 2 * slots.length / 3)));
  const d = slots;
  for (let i = 0; i < rows; i++) d[i] = uniforms[i]!;
  const asFloats = new Float32Array(d.buffer);
  const job: PoolJob = {
    kind: JobKind.Sample,
    items: rows,
    arrays: () => [logits, asFloats],
    encode: (w) => {
      w.int(rows); w.int(V); w.double(params.temperature); w.double(params.topP); w.int(params.topK);
      w.array(logits); w.array(asFloats);
    },
    run: (i) => runItem(logits, V, params, d, rows, i),
  };
  runJob(job);
  const out: SampledToken[] = [];
  for (let i = 0; i < rows; i++) {
    const token = d[rows + 2 * i]!;
    // Redrawn here, it throws drawToken's own message.
    if (token === FAILED) out.push(drawToken(logits.subarray(i * V, (i + 1) * V), params, d[i]!));
    else out.push({ token, logprob: d[rows + 2 * i + 1]! });
  }
  return out;
}

/** A worker's copy of a job encoded by drawTokens. */
export function decodeSample(r: JobReader): DecodedJob {
  const rows = r.int(), V = r.int();
  const params: SamplingParams = { temperature: r.double(), topP: r.double(), topK: r.int() };
  const logits = r.need('logits'), floats = r.need('draws');
  const d = new Float64Array(floats.buffer, floats.byteOffset, floats.length / 2);
  return { items: rows, run: (i) => runItem(logits, V, params, d, rows, i) };
}
