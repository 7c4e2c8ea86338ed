// The engine's one threading layer: worker threads that share the calling thread's work.
//
// Large matrix products (gemm-job.ts) are cut into one part per thread, a layer's attention
// (attention-jobs.ts) into one item per sequence and key/value head, SwiGLU and the log-softmax
// (row-jobs.ts) into row ranges; the calling thread and the workers claim items until none are left.
// OpenBLAS itself runs on one thread while the pool is up: its own threads would compete with the
// workers for the same cores (they busy-wait between calls), and its threading cannot split the many
// small attention products at all. Measured on the reference model (docs/performance.md): a split
// product runs about as fast as OpenBLAS's own two threads (192-203 against 200-208 GFLOP/s in
// isolation); the training step gained 3-8% and a LoRA step 12% from the rest.
//
// Threads: MARFT_THREADS (total, this one included), else OPENBLAS_NUM_THREADS or OMP_NUM_THREADS,
// else every core; at most MAX_WORKERS + 1. With one thread, without shared-memory kernels
// (MARFT_SIMD=0), with Apple's Accelerate (threaded on its own), or when a worker fails, there is no
// pool and OpenBLAS gets the threads instead (the earlier design), with a one-line notice on failure.
// Only the main thread has a pool (an engine used inside a worker thread runs on that thread, with
// OpenBLAS's threads as the main thread set them).
//
// The workers start at the first large product (about half a second, in the background); until they
// are ready, the calling thread runs every part itself, which gives the same numbers (each part is
// computed the same way whichever thread runs it; tests compare pool and no-pool runs).
// OpenBLAS is held at one thread from the process's first product of any size (gemm.ts calls
// settleBlasThreads), not from the pool's start: OpenBLAS rounds a product differently on two threads
// than on one, so the small products run before the pool started (the first layer's projections in a
// process's first pass) used to round differently from the same products in every later pass
// (docs/engine.md, "Determinism inside one process"; test/engine/determinism.test.ts).
//
// Buffers: a worker sees only shared memory (shareable-arrays.ts). The WebAssembly memory is handed to
// it at start; any other SharedArrayBuffer is sent once, the first time a job uses it, and forgotten
// once the calling thread has dropped it. A job with an unshared operand runs in the calling thread.
// Synchronisation is through a shared control block and Atomics (pool-protocol.ts), not messages: the
// engine's passes are synchronous and a job lasts from tens of microseconds to a few milliseconds.
// Workers spin briefly after a job, then sleep; the calling thread never waits for a sleeping worker
// (it takes any item nobody has claimed itself and waits only for items other threads are running),
// since waking one can take longer than the whole job.
import { isMainThread, Worker, MessageChannel, type MessagePort } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { blasInfo, setBlasThreads } from './blas.ts';
import { simdKernels, SIMD_SCRATCH_BYTES, type SimdKernels } from './wasm/simd.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';
import {
  claimItem, CTRL_COMPLETED, CTRL_CLAIM, CTRL_FAILED, CTRL_INTS, CTRL_JOB, CTRL_KIND, CTRL_MESSAGE_BYTES, CTRL_READY, CTRL_SCRATCH,
  CTRL_SLEEPING, CTRL_VERSION, JobWriter, MAX_ITEMS, MAX_WORKERS, MESSAGE_BYTES, openClaims, SCRATCH_SLOT, WASM_MEMORY_ID, type PoolJob,
  WORKER_STARTED,
} from './pool-protocol.ts';

/** A job whose claimed items make no progress for this long is reported as failed instead of waited on forever. */
const STALL_MS = 120_000;
/** The calling thread spins this long for the workers' last items before it sleeps (waking it costs tens of µs). */
const SPIN_MS = 2;

export interface WorkerData {
  memory: WebAssembly.Memory;
  control: SharedArrayBuffer;
  message: SharedArrayBuffer;
  port: MessagePort;
  index: number;
  /** Byte offset of this worker's SIMD scratch region (a block of the calling thread's arena). */
  simdScratch: number;
  /** Whether the calling thread has a native BLAS: then the worker must load it too. */
  nativeBlas: boolean;
}

/** The longest a worker that has not started holds the process open (a worker stuck in its start is given up). */
const START_HOLD_MS = 60_000;

/** Messages on a worker's port: a buffer it will be sent jobs over, or one it may forget. */
export type BufferMessage = { add: number; buffer: SharedArrayBuffer } | { drop: number };

class ThreadPool {
  private readonly ctrl: Int32Array;
  private readonly message: Uint8Array;
  private readonly workers: Worker[] = [];
  private readonly ports: MessagePort[] = [];
  /** Score areas lent to each worker, replaced by larger ones when a longer sequence comes. */
  private readonly lent: [Float32Array, Float32Array][] = [];
  /**
   * Each worker's SIMD scratch region, an arena block. Held here for the pool's life: a block whose
   * view is collected goes back to the arena (wasm/arena.ts), which would hand it out again.
   */
  private readonly simdScratch: Float32Array[] = [];
  private readonly ids = new WeakMap<SharedArrayBuffer, number>();
  private nextId = WASM_MEMORY_ID + 1;
  private readonly forget = new FinalizationRegistry<number>((id) => {
    this.post({ drop: id });
    // Wake sleeping workers (their generation check fails, they read their messages and sleep again).
    if (Atomics.load(this.ctrl, CTRL_SLEEPING) > 0) Atomics.notify(this.ctrl, CTRL_JOB);
  });
  private ready = false;
  private startError: string | null = null;
  /** True while this thread runs a job's items (their own products then run directly). */
  busy = false;

  constructor(private readonly simd: SimdKernels, count: number) {
    const control = new SharedArrayBuffer(CTRL_INTS * 4);
    const message = new SharedArrayBuffer(MESSAGE_BYTES);
    this.ctrl = new Int32Array(control);
    this.message = new Uint8Array(message);
    const entry = new URL('./pool-worker-entry.mjs', import.meta.url);
    for (let w = 0; w < count; w++) {
      const simdScratch = simd.arena!.take(SIMD_SCRATCH_BYTES / 4);
      if (!simdScratch) throw new Error('the WebAssembly arena has no room for a worker scratch region');
      this.simdScratch.push(simdScratch);
      const { port1, port2 } = new MessageChannel();
      const data: WorkerData = {
        memory: simd.memory, control, message, port: port2, index: w, simdScratch: simdScratch.byteOffset,
        nativeBlas: blasInfo().backend !== 'portable',
      };
      // No inherited node flags: the entry registers what it needs, and some flags of the main thread
      // (--input-type for `node -e`) stop a worker from starting at all.
      const worker = new Worker(entry, { workerData: data, transferList: [port2], execArgv: [] });
      // Idle workers must not keep the process alive, but one still starting must: a process that
      // ends (its event loop empty) terminates its workers, and a worker terminated while it loads
      // koffi's native module aborts the whole process (koffi's initialisation throws in a thread
      // that can no longer run JavaScript, and Node's napi_throw fails: "FATAL ERROR:
      // Error::ThrowAsJavaScriptException napi_throw", SIGABRT). Seen under load, where a short command
      // (an evaluation of 0.6 s) finished before its workers had started. So the handle is held until
      // the worker says it started (or failed, or exited), at most START_HOLD_MS.
      const release = (): void => void worker.unref();
      // Only the worker's own word: a loader registered in the worker (tsx) may post messages too.
      worker.on('message', (m: unknown) => { if (m === WORKER_STARTED) release(); });
      worker.once('exit', release);
      setTimeout(release, START_HOLD_MS).unref();
      // Errors inside jobs come through the control block; this catches a worker that could not start.
      worker.on('error', (e) => { this.startError ??= `worker ${w}: ${e.message}`; });
      port1.unref();
      this.workers.push(worker);
      this.ports.push(port1);
      this.lent.push([new Float32Array(0), new Float32Array(0)]);
    }
  }

  get threads(): number {
    return this.workers.length + 1;
  }

  /**
   * Whether every worker reported ready (checked without blocking). A worker that failed to start
   * stops the pool with a notice (the engine goes on with OpenBLAS's threads).
   */
  isReady(): boolean {
    if (!this.ready) {
      if (Atomics.load(this.ctrl, CTRL_FAILED) !== 0 || this.startError) {
        disable(this.startError ?? this.failure());
        return false;
      }
      this.ready = Atomics.load(this.ctrl, CTRL_READY) === this.workers.length;
    }
    return this.ready;
  }

  /** The failed worker's message (CTRL_FAILED is 1 while it writes it, 2 once written). */
  private failure(): string {
    const t0 = performance.now();
    while (Atomics.load(this.ctrl, CTRL_FAILED) !== 2 && performance.now() - t0 < 1000) { /* the worker is writing it */ }
    return new TextDecoder().decode(this.message.slice(0, this.ctrl[CTRL_MESSAGE_BYTES]!));
  }

  private post(m: BufferMessage): void {
    for (const p of this.ports) p.postMessage(m);
  }

  private idOf(buffer: SharedArrayBuffer): number {
    if (buffer === this.simd.buf) return WASM_MEMORY_ID;
    let id = this.ids.get(buffer);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(buffer, id);
      this.forget.register(buffer, id);
      this.post({ add: id, buffer });
    }
    return id;
  }

  /** Runs every item of the job on this thread and the workers; false (nothing run) when the job cannot be shared. */
  run(job: PoolJob): boolean {
    if (job.items > MAX_ITEMS) return false;
    for (const a of job.arrays()) if (a && !(a.buffer instanceof SharedArrayBuffer)) return false;
    if (job.scratchFloats) this.lendScratch(job.scratchFloats);
    const ctrl = this.ctrl;
    const generation = ((ctrl[CTRL_JOB]! + 1) & 0x3fffffff) || 1; // never −1 (CTRL_VERSION's "writing")
    Atomics.store(ctrl, CTRL_VERSION, -1);
    try {
      job.encode(new JobWriter(ctrl, (b) => this.idOf(b)));
    } catch {
      return false; // more parameters than the control block holds (thousands of sequences): run here
    }
    ctrl[CTRL_KIND] = job.kind;
    Atomics.store(ctrl, CTRL_VERSION, generation);
    Atomics.store(ctrl, CTRL_COMPLETED, 0);
    Atomics.store(ctrl, CTRL_CLAIM, openClaims(generation));
    Atomics.store(ctrl, CTRL_JOB, generation);
    if (Atomics.load(ctrl, CTRL_SLEEPING) > 0) Atomics.notify(ctrl, CTRL_JOB);
    let mine: unknown = null;
    let claimed = job.items;
    this.busy = true;
    try {
      for (let i = claimItem(ctrl, generation, job.items); i >= 0; i = claimItem(ctrl, generation, job.items)) {
        job.run(i);
        Atomics.add(ctrl, CTRL_COMPLETED, 1);
      }
    } catch (e) {
      // Close the job to further claims, count the item that threw as finished, and still wait for
      // the items the workers are running: they write into the same buffers.
      mine = e;
      claimed = Math.min(job.items, Atomics.exchange(ctrl, CTRL_CLAIM, openClaims(generation) | MAX_ITEMS) & 0xffff);
      Atomics.add(ctrl, CTRL_COMPLETED, 1);
    } finally {
      this.busy = false;
    }
    this.waitForItems(claimed);
    if (mine) throw mine;
    this.throwIfFailed();
    return true;
  }

  /** Waits until `claimed` items are finished: every item claimed so far, by any thread. */
  private waitForItems(claimed: number): void {
    const ctrl = this.ctrl;
    const t0 = performance.now();
    let spins = 0;
    while (Atomics.load(ctrl, CTRL_COMPLETED) < claimed) {
      if ((++spins & 63) === 0 && performance.now() - t0 > SPIN_MS) break;
    }
    let completed = Atomics.load(ctrl, CTRL_COMPLETED), since = performance.now();
    while (completed < claimed) {
      Atomics.wait(ctrl, CTRL_COMPLETED, completed, 1000);
      const now = Atomics.load(ctrl, CTRL_COMPLETED);
      if (now !== completed) {
        completed = now;
        since = performance.now();
      } else if (performance.now() - since > STALL_MS) {
        disable(`a worker made no progress for ${STALL_MS / 1000} s`);
        throw new Error(`thread pool: a worker stopped responding (no progress for ${STALL_MS / 1000} s)`);
      }
    }
  }

  /** Makes sure each worker has two score areas of at least `floats` (takeBuffer's are always shared). */
  private lendScratch(floats: number): void {
    for (let w = 0; w < this.workers.length; w++) {
      let pair = this.lent[w]!;
      if (pair[0].length < floats) {
        releaseBuffers(pair[0], pair[1]);
        pair = [takeBuffer(floats), takeBuffer(floats)];
        this.lent[w] = pair;
        const at = CTRL_SCRATCH + SCRATCH_SLOT * w;
        this.ctrl[at] = this.idOf(pair[0].buffer as SharedArrayBuffer);
        this.ctrl[at + 1] = pair[0].byteOffset / 4;
        this.ctrl[at + 2] = this.idOf(pair[1].buffer as SharedArrayBuffer);
        this.ctrl[at + 3] = pair[1].byteOffset / 4;
        this.ctrl[at + 4] = floats;
      }
    }
  }

  private throwIfFailed(): void {
    if (Atomics.load(this.ctrl, CTRL_FAILED) === 0) return;
    const text = this.failure();
    disable(text);
    throw new Error(`thread pool: ${text}`);
  }

  terminate(): void {
    for (const w of this.workers) void w.terminate();
  }
}

/** The engine's thread count: MARFT_THREADS, else OPENBLAS_NUM_THREADS / OMP_NUM_THREADS, else every core (at most MAX_WORKERS + 1). */
export function threadCount(): number {
  for (const name of ['MARFT_THREADS', 'OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS']) {
    const raw = process.env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of threads (1 or more), got '${raw}'`);
    return Math.min(n, MAX_WORKERS + 1);
  }
  return Math.min(availableParallelism(), MAX_WORKERS + 1);
}

let pool: ThreadPool | null | undefined;
/** Whether this process runs a pool: decided once, at its first product (settleBlasThreads). */
let poolPlanned: boolean | undefined;

/**
 * Decides, once per process, whether the engine runs its pool, and when it does, holds OpenBLAS at one
 * thread from now on. gemm.ts calls it before every product it hands to OpenBLAS whole, so that no
 * product ever runs at OpenBLAS's starting thread count and then at one thread later in the process
 * (the two round differently; see the header).
 */
export function settleBlasThreads(): boolean {
  if (poolPlanned !== undefined) return poolPlanned;
  // Only the main thread has a pool: a pool worker's own products run on its thread, and only the main
  // thread may set OpenBLAS's thread count (global to the process), which the pool must hold at one.
  poolPlanned = isMainThread && threadCount() > 1 && !!simdKernels()?.arena && blasInfo().backend !== 'accelerate';
  if (poolPlanned) setBlasThreads(1);
  return poolPlanned;
}

/** The pool, started on first call when the engine runs on several threads; null without one (see the header). */
function getPool(): ThreadPool | null {
  if (pool !== undefined) return pool;
  if (!settleBlasThreads()) {
    pool = null;
    return pool;
  }
  try {
    pool = new ThreadPool(simdKernels()!, threadCount() - 1);
  } catch (e) {
    process.stderr.write(`marft: worker threads not started (${(e as Error).message}); OpenBLAS's threads are used instead.\n`);
    pool = null;
    setBlasThreads(threadCount());
  }
  return pool;
}

/**
 * Stopped pools, kept so that their workers' scratch regions and score areas never return to the
 * arena: a worker still running when it is terminated (one that stopped responding) may write there.
 */
const retired: ThreadPool[] = [];

function disable(why: string): void {
  if (!pool) return;
  retired.push(pool);
  // One line: the error thrown to the caller (when there is one) carries the worker's stack.
  process.stderr.write(`marft: worker threads stopped (${why.split('\n')[0]}); OpenBLAS's threads are used from now on.\n`);
  pool.terminate();
  pool = null;
  setBlasThreads(threadCount());
}

/**
 * Runs every item of the job: on the pool's threads when it is up, ready and can see the job's arrays,
 * otherwise in the calling thread (in item order). Jobs started from inside an item run directly.
 */
export function runJob(job: PoolJob): void {
  const p = job.items > 1 ? getPool() : null;
  if (!(p && !p.busy && p.isReady() && p.run(job))) {
    for (let i = 0; i < job.items; i++) job.run(i);
  }
}

/** Threads a job should be cut for: the pool's (whether or not it is ready yet), or 1 without a pool or inside a job. */
export function poolThreads(): number {
  const p = getPool();
  return p && !p.busy ? p.threads : 1;
}

/** Whether the workers are running and ready (tests and reports). */
export function workersReady(): boolean {
  return pool?.isReady() ?? false;
}
