// The attention of one layer over a packed batch (every sequence, forward or backward) as a list of
// independent items that any thread can run: item i is sequence ⌊i / nKvHeads⌋ with the query heads
// of key/value head i mod nKvHeads (decoding with a multi-head model: item i is sequence i, every head). Items write disjoint parts of the outputs (their rows' columns of
// out, lse, probs and dq; their rows of the group's dk and dv columns, which only the group's own
// heads accumulate into), so they can run in any order and on any thread, and the result is the
// same bit for bit as running them in a row (thread-pool.ts runs them on several threads).
// A job travels to a worker as integers (pool-protocol.ts): its shape, the sequences, the buffers.
import { attentionBackward, attentionForward, type AttentionDims } from './kernels/attention.ts';
import { JobKind, type DecodedJob, type JobReader, type PoolJob } from './pool-protocol.ts';

/**
 * One sequence of a pass: query rows [row0, row0 + len) at positions past … past + len − 1. Without a
 * cache (training, scoring) its keys and values are the same rows of k and v and past is 0; a sampling
 * pass reads them from the sequence's slot of the key/value cache, whose first row in k and v is kRow0.
 */
export interface AttentionSeq {
  row0: number;
  len: number;
  /** Positions before the rows (default 0). */
  past?: number;
  /** Row of k and v holding position 0 (default row0). */
  kRow0?: number;
}

export interface AttentionForwardJob {
  kind: 'forward';
  dims: AttentionDims;
  seqs: AttentionSeq[];
  q: Float32Array; k: Float32Array; v: Float32Array;
  out: Float32Array;
  lse: Float32Array;
  /** Room for the probabilities (decoder-layer.ts keptProbsBuffer), or null. */
  probs: Float32Array | null;
}

export interface AttentionBackwardJob {
  kind: 'backward';
  dims: AttentionDims;
  seqs: AttentionSeq[];
  q: Float32Array; k: Float32Array; v: Float32Array;
  lse: Float32Array;
  probs: Float32Array | null;
  dout: Float32Array;
  /** Overwritten. */
  dq: Float32Array;
  /** Accumulated into (zeroed by the caller). */
  dk: Float32Array; dv: Float32Array;
}

export type AttentionJob = AttentionForwardJob | AttentionBackwardJob;

/**
 * Key/value heads per item: one, except when decoding with a multi-head (not grouped) model, where an
 * item is a whole sequence so that attention.ts computes every head of a decoded token in two
 * products (attentionDecodeAllHeads) instead of two per head.
 */
function kvHeadsPerItem(job: AttentionJob): number {
  const { nHeads, nKvHeads } = job.dims;
  return job.kind === 'forward' && nHeads === nKvHeads && job.seqs.some((s) => (s.past ?? 0) > 0) ? nKvHeads : 1;
}

function itemCount(job: AttentionJob): number {
  return job.seqs.length * (job.dims.nKvHeads / kvHeadsPerItem(job));
}

/** Where each sequence's probabilities start in the kept-probabilities buffer: [nHeads, len, len] in turn. */
function probsOffsets(job: AttentionJob): number[] {
  const out: number[] = [];
  let at = 0;
  for (const s of job.seqs) {
    out.push(at);
    at += job.dims.nHeads * s.len * s.len;
  }
  return out;
}

/**
 * Floats of score scratch one item needs (attention.ts's two work areas, each this long): its query
 * rows, or, decoding one token, the query heads it computes at once (a group's, or every head of a
 * multi-head model), by the positions it sees.
 */
function scratchFloats(job: AttentionJob): number {
  const headsPerItem = kvHeadsPerItem(job) * (job.dims.nHeads / job.dims.nKvHeads);
  let most = 0;
  for (const s of job.seqs) most = Math.max(most, Math.max(s.len, headsPerItem) * ((s.past ?? 0) + s.len));
  return most;
}

/** Runs item i of the job in the calling thread. `probsAt` is probsOffsets(job), `per` kvHeadsPerItem(job). */
function runItem(job: AttentionJob, i: number, probsAt: number[], per: number): void {
  const { nHeads, nKvHeads } = job.dims;
  const itemsPerSeq = nKvHeads / per;
  const seqIndex = Math.floor(i / itemsPerSeq), g = (i % itemsPerSeq) * per;
  const group = nHeads / nKvHeads;
  const h0 = g * group, h1 = h0 + per * group;
  const { row0, len, past = 0, kRow0 = row0 } = job.seqs[seqIndex]!;
  if (job.kind === 'forward') {
    attentionForward(job.dims, job.q, row0, len, job.k, job.v, kRow0, past, job.out, row0, job.lse, row0 * nHeads,
      job.probs, probsAt[seqIndex]!, h0, h1);
  } else {
    attentionBackward(job.dims, len, row0, job.q, job.k, job.v, job.lse, row0 * nHeads, job.dout, job.dq, job.dk, job.dv,
      job.probs, probsAt[seqIndex]!, h0, h1);
  }
}

/** The job for the thread pool (thread-pool.ts). */
export function attentionPoolJob(job: AttentionJob): PoolJob {
  const probsAt = probsOffsets(job), per = kvHeadsPerItem(job);
  const arrays = job.kind === 'forward'
    ? [job.q, job.k, job.v, job.out, job.lse, job.probs]
    : [job.q, job.k, job.v, job.lse, job.probs, job.dout, job.dq, job.dk, job.dv];
  return {
    kind: job.kind === 'forward' ? JobKind.AttentionForward : JobKind.AttentionBackward,
    items: itemCount(job),
    arrays: () => arrays,
    scratchFloats: scratchFloats(job),
    encode: (w) => {
      w.int(job.dims.nHeads); w.int(job.dims.nKvHeads); w.int(job.dims.headDim);
      w.int(job.seqs.length);
      for (const s of job.seqs) { w.int(s.row0); w.int(s.len); w.int(s.past ?? 0); w.int(s.kRow0 ?? s.row0); }
      for (const a of arrays) w.array(a);
    },
    run: (i) => runItem(job, i, probsAt, per),
  };
}

/** A worker's copy of a job encoded by attentionPoolJob. */
export function decodeAttention(kind: JobKind, r: JobReader): DecodedJob {
  const dims: AttentionDims = { nHeads: r.int(), nKvHeads: r.int(), headDim: r.int() };
  const seqs: AttentionSeq[] = [];
  for (let i = 0, n = r.int(); i < n; i++) seqs.push({ row0: r.int(), len: r.int(), past: r.int(), kRow0: r.int() });
  const common = { dims, seqs, q: r.need('q'), k: r.need('k'), v: r.need('v') };
  const job: AttentionJob = kind === JobKind.AttentionForward
    ? { kind: 'forward', ...common, out: r.need('out'), lse: r.need('lse'), probs: r.array() }
    : { kind: 'backward', ...common, lse: r.need('lse'), probs: r.array(), dout: r.need('dout'), dq: r.need('dq'), dk: r.need('dk'), dv: r.need('dv') };
  const probsAt = probsOffsets(job), per = kvHeadsPerItem(job);
  return { items: itemCount(job), run: (i) => runItem(job, i, probsAt, per) };
}
