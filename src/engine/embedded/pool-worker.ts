// A worker thread of the engine's pool (thread-pool.ts): waits for a job, claims its items until none
// are left (pool-protocol.ts), counts each one finished, and waits again. It works on the calling thread's
// buffers through its own views of the same shared memory, and allocates none of its own beyond
// small temporaries: its SIMD scratch region and its attention score areas are lent to it.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { attachWorkerKernels } from './wasm/simd.ts';
import { blasInfo } from './blas.ts';
import { useScoreScratch } from './kernels/attention.ts';
import { decodeAttention } from './attention-jobs.ts';
import { decodeGemm } from './gemm-job.ts';
import { decodeRows } from './row-jobs.ts';
import { decodeSample } from './sample-jobs.ts';
import type { BufferMessage, WorkerData } from './thread-pool.ts';
import {
  claimItem, CTRL_COMPLETED, CTRL_FAILED, CTRL_JOB, CTRL_KIND, CTRL_MESSAGE_BYTES, CTRL_READY, CTRL_SCRATCH, CTRL_SLEEPING, CTRL_VERSION,
  JobKind, JobReader, SCRATCH_SLOT, WASM_MEMORY_ID, type DecodedJob,
  WORKER_STARTED,
} from './pool-protocol.ts';

/** After a job, the worker spins this long for the next one before it sleeps (waking it costs tens of µs). */
const SPIN_MS = 1;

const data = workerData as WorkerData;
const ctrl = new Int32Array(data.control);
const message = new Uint8Array(data.message);
const buffers = new Map<number, SharedArrayBuffer>();

// A dropped buffer's memory is freed only once this thread's garbage collector has collected its own
// handle on it, and a worker allocates too little for its collector to run on its own: after
// forgetting DROPPED_BYTES_GC of buffers, it collects explicitly (a 0.5B model's 600 MB logits,
// one buffer per pass, otherwise stayed resident two at a time).
const DROPPED_BYTES_GC = 64 << 20;
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
let droppedBytes = 0;
/** Records the first failure for the calling thread, which reports it and stops the pool. */
function fail(e: unknown): void {
  if (Atomics.compareExchange(ctrl, CTRL_FAILED, 0, 1) !== 0) return;
  const text = new TextEncoder().encode(`worker ${data.index}: ${(e as Error)?.stack ?? String(e)}`).slice(0, message.length);
  message.set(text);
  ctrl[CTRL_MESSAGE_BYTES] = text.length;
  Atomics.store(ctrl, CTRL_FAILED, 2); // the message is complete
}

function bufferOf(id: number): SharedArrayBuffer {
  const b = buffers.get(id);
  if (!b) throw new Error(`job names shared buffer ${id}, which was never sent`);
  return b;
}

/** Takes the buffers sent (and forgotten) since the last job. */
function drainMessages(): void {
  for (let m = receiveMessageOnPort(data.port); m; m = receiveMessageOnPort(data.port)) {
    const msg = m.message as BufferMessage;
    if ('add' in msg) buffers.set(msg.add, msg.buffer);
    else {
      droppedBytes += buffers.get(msg.drop)?.byteLength ?? 0;
      buffers.delete(msg.drop);
    }
  }
  if (droppedBytes >= DROPPED_BYTES_GC) {
    droppedBytes = 0;
    collect();
  }
}

function decode(kind: number, r: JobReader): DecodedJob {
  if (kind === JobKind.Gemm) return decodeGemm(r);
  if (kind === JobKind.AttentionForward || kind === JobKind.AttentionBackward) return decodeAttention(kind, r);
  if (kind === JobKind.Rows) return decodeRows(r);
  if (kind === JobKind.Sample) return decodeSample(r);
  throw new Error(`unknown job kind ${kind}`);
}

function start(): void {
  const simd = attachWorkerKernels(data.memory, data.simdScratch);
  buffers.set(WASM_MEMORY_ID, simd.buf);
  if (data.nativeBlas && blasInfo().backend === 'portable') throw new Error('the BLAS library did not load in the worker thread');
  const at = CTRL_SCRATCH + SCRATCH_SLOT * data.index;
  useScoreScratch((n) => {
    drainMessages();
    const len = ctrl[at + 4]!;
    if (len < n) throw new Error(`score scratch of ${len} floats lent, ${n} needed`);
    return [new Float32Array(bufferOf(ctrl[at]!), ctrl[at + 1]! * 4, len), new Float32Array(bufferOf(ctrl[at + 2]!), ctrl[at + 3]! * 4, len)];
  });
}

/**
 * Waits until the job generation moves past `seen`: a short spin, then a sleep. The calling thread
 * also wakes a sleeping worker without a new job when it forgets buffers (thread-pool.ts), so that
 * they are let go of at once.
 */
function awaitJob(seen: number): number {
  const t0 = performance.now();
  for (let spins = 1; Atomics.load(ctrl, CTRL_JOB) === seen; spins++) {
    if ((spins & 63) === 0 && performance.now() - t0 > SPIN_MS) {
      drainMessages();
      // Counted as asleep before the wait checks the generation: the calling thread stores the
      // generation before it reads this count, so either it notifies or the wait sees the new job.
      Atomics.add(ctrl, CTRL_SLEEPING, 1);
      Atomics.wait(ctrl, CTRL_JOB, seen);
      Atomics.sub(ctrl, CTRL_SLEEPING, 1);
    }
  }
  return Atomics.load(ctrl, CTRL_JOB);
}

/** One claimed item finished: counted, and the calling thread woken if it sleeps on the count. */
function finished(): void {
  Atomics.add(ctrl, CTRL_COMPLETED, 1);
  Atomics.notify(ctrl, CTRL_COMPLETED);
}

let started = false;
try {
  start();
  started = true;
} catch (e) {
  fail(e);
}
// The main thread holds this thread's handle until it has started, or failed to (thread-pool.ts: a
// process that ends while a worker still loads its native modules aborts), then lets it go.
if (!started) parentPort?.postMessage(WORKER_STARTED);
if (started) {
  let seen = Atomics.load(ctrl, CTRL_JOB);
  Atomics.add(ctrl, CTRL_READY, 1);
  parentPort?.postMessage(WORKER_STARTED);
  for (;;) {
    seen = awaitJob(seen);
    let running = false;
    try {
      drainMessages();
      // The calling thread may have finished this job alone and be writing the next one over it: a job
      // read while the version was not this generation's is dropped, errors and all (pool-protocol.ts).
      if (Atomics.load(ctrl, CTRL_VERSION) !== seen) continue;
      let job: DecodedJob | null = null, error: unknown = null;
      try {
        job = decode(ctrl[CTRL_KIND]!, new JobReader(ctrl, bufferOf));
      } catch (e) {
        error = e;
      }
      if (Atomics.load(ctrl, CTRL_VERSION) !== seen) continue;
      if (!job) throw error;
      for (let i = claimItem(ctrl, seen, job.items); i >= 0; i = claimItem(ctrl, seen, job.items)) {
        running = true;
        job.run(i);
        running = false;
        finished();
      }
    } catch (e) {
      fail(e);
      if (running) finished(); // counted, so that the calling thread stops waiting and reports the failure
    }
  }
}
