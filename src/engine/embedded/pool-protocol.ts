// What the calling thread and the worker threads of thread-pool.ts share: the layout of the control
// block (an Int32Array over a SharedArrayBuffer, driven with Atomics), the kinds of job, and the
// encoding of a job's parameters into that block. A buffer travels as (id, offset, length): the id
// names its SharedArrayBuffer (0 is the WebAssembly memory; the others are sent to each worker once,
// thread-pool.ts), the offset and length are in floats.

/** Job generation: the calling thread increments it to start a job; idle workers wait on it. */
export const CTRL_JOB = 0;
/**
 * Claims: (generation mod 2^15) << 16 | next item. A thread takes item i by moving it from i to i + 1
 * with compareExchange while the generation bits still name its job, so a worker that wakes late
 * (after its job is over, or while the next one is being written) can never take an item, and the
 * calling thread never waits for a worker that is not running one.
 */
export const CTRL_CLAIM = 1;
/** Items of the current job finished (by any thread); the calling thread waits for all of them. */
export const CTRL_COMPLETED = 2;
/** 1 once a worker failed, 2 once it has written its message (in the message block, CTRL_MESSAGE_BYTES long). */
export const CTRL_FAILED = 3;
/** Workers started and ready. */
export const CTRL_READY = 4;

/** What a worker posts to its parent once it has started, or failed to (thread-pool.ts holds its handle until then). */
export const WORKER_STARTED = 'marft-pool-worker-started';
/** Workers asleep on CTRL_JOB (the calling thread notifies only when there are some). */
export const CTRL_SLEEPING = 5;
export const CTRL_MESSAGE_BYTES = 6;
/** The kind of the current job (JobKind). */
export const CTRL_KIND = 7;
/**
 * Per worker w, from CTRL_SCRATCH + SCRATCH_SLOT·w: its two score areas for attention (buffer id and
 * float offset of area A, then of area B, then their length), lent by the calling thread.
 */
export const CTRL_SCRATCH = 8;
export const SCRATCH_SLOT = 5;
export const MAX_WORKERS = 7;
/**
 * The generation whose parameters the block holds, −1 while the calling thread writes new ones. A
 * worker reads it before and after decoding a job: if either differs from its generation, what it
 * read may be a mix of two jobs, and it drops it (the calling thread ran that job without it).
 */
export const CTRL_VERSION = CTRL_SCRATCH + SCRATCH_SLOT * MAX_WORKERS;
/** Where a job's parameters start. */
export const CTRL_JOB_AT = CTRL_SCRATCH + SCRATCH_SLOT * MAX_WORKERS + 5;
export const CTRL_INTS = 16384;
/** Items per job at most (the claim word's low 16 bits). */
export const MAX_ITEMS = 0xffff;

/** The claim word that opens job `generation` at item 0. */
export function openClaims(generation: number): number {
  return (generation & 0x7fff) << 16;
}

/**
 * Takes the next item of job `generation` (at most `items`), or returns −1 when there is none left
 * or the job is no longer current.
 */
export function claimItem(ctrl: Int32Array, generation: number, items: number): number {
  const tag = generation & 0x7fff;
  for (;;) {
    const c = Atomics.load(ctrl, CTRL_CLAIM);
    if (c >>> 16 !== tag || (c & 0xffff) >= items) return -1;
    if (Atomics.compareExchange(ctrl, CTRL_CLAIM, c, c + 1) === c) return c & 0xffff;
  }
}
export const MESSAGE_BYTES = 4096;

export const JobKind = { Gemm: 1, AttentionForward: 2, AttentionBackward: 3, Rows: 4, Sample: 5 } as const;
export type JobKind = (typeof JobKind)[keyof typeof JobKind];

/** Id of the WebAssembly memory among the shared buffers. */
export const WASM_MEMORY_ID = 0;

/**
 * A position in the job parameters of the control block, seen as ints, floats and (8-byte aligned)
 * doubles. Every step is bounds-checked: a worker may read a job while the next one is written over
 * it (it then takes no item, pool-worker.ts), and garbage counts must not run it past the block.
 */
class Cursor {
  private at = CTRL_JOB_AT;
  protected readonly floats: Float32Array;
  protected readonly doubles: Float64Array;
  constructor(protected readonly ints: Int32Array, private readonly what: string) {
    this.floats = new Float32Array(ints.buffer);
    this.doubles = new Float64Array(ints.buffer);
  }

  /** The index of the next int (or float), moving past it. */
  protected next(): number {
    if (this.at >= CTRL_INTS) throw new Error(`thread pool: ${this.what}`);
    return this.at++;
  }

  /** The index of the next double, moving past it. */
  protected nextDouble(): number {
    this.at += this.at & 1;
    if (this.at + 2 > CTRL_INTS) throw new Error(`thread pool: ${this.what}`);
    this.at += 2;
    return this.at / 2 - 1;
  }
}

/** Writes a job's parameters into the control block. */
export class JobWriter extends Cursor {
  constructor(ints: Int32Array, private readonly idOf: (buffer: SharedArrayBuffer) => number) {
    super(ints, 'job parameters do not fit the control block');
  }

  int(v: number): void {
    this.ints[this.next()] = v;
  }

  float(v: number): void {
    this.floats[this.next()] = v;
  }

  /** A number kept exactly (a temperature: every part must use the same value as the calling thread). */
  double(v: number): void {
    this.doubles[this.nextDouble()] = v;
  }

  /** A shared array (or null): buffer id, element type, offset and length in elements. */
  array(a: Float32Array | Int32Array | null): void {
    if (a === null) {
      this.int(-1);
      return;
    }
    this.int(this.idOf(a.buffer as SharedArrayBuffer));
    this.int(a instanceof Int32Array ? 1 : 0);
    this.int(a.byteOffset / 4);
    this.int(a.length);
  }
}

/** Reads them back in a worker, arrays as views of the buffers it was sent. */
export class JobReader extends Cursor {
  constructor(ints: Int32Array, private readonly bufferOf: (id: number) => SharedArrayBuffer) {
    super(ints, 'job read past the control block');
  }

  int(): number {
    return this.ints[this.next()]!;
  }

  float(): number {
    return this.floats[this.next()]!;
  }

  double(): number {
    return this.doubles[this.nextDouble()]!;
  }

  anyArray(): Float32Array | Int32Array | null {
    const id = this.int();
    if (id < 0) return null;
    const isInt = this.int() === 1, offset = this.int(), length = this.int();
    const buffer = this.bufferOf(id);
    return isInt ? new Int32Array(buffer, offset * 4, length) : new Float32Array(buffer, offset * 4, length);
  }

  array(): Float32Array | null {
    const a = this.anyArray();
    if (a instanceof Int32Array) throw new Error('thread pool: an int array where floats were expected');
    return a;
  }

  need(what: string): Float32Array {
    const a = this.array();
    if (a === null) throw new Error(`thread pool: job without its ${what}`);
    return a;
  }
}

/** A job as the calling thread sees it: items that any thread may run, in any order. */
export interface PoolJob {
  kind: JobKind;
  items: number;
  /** Every array a worker would touch (they must all be shared). */
  arrays(): (Float32Array | Int32Array | null)[];
  encode(w: JobWriter): void;
  /** Runs item i in the calling thread. */
  run(i: number): void;
  /** Floats of score scratch each worker needs (attention), 0 for none. */
  scratchFloats?: number;
}

/** A job as a worker decodes it. */
export interface DecodedJob {
  items: number;
  run(i: number): void;
}
