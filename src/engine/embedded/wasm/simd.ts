// The WebAssembly SIMD kernels (kernels.wat) behind plain Float32Array signatures.
//
// A WebAssembly module can only address its own memory. The engine's large buffers come from an
// arena inside that memory (wasm/arena.ts, through buffer-pool.ts), and a kernel works on those in
// place. Any other operand (arena full or off, norm weights, per-row statistics) goes through a
// scratch region at the start of the memory: copied in, and out if the kernel writes it, in chunks of
// rows small enough to stay in the core's cache (about 64K floats per operand). One mechanism,
// SimdKernels.run, makes that choice operand by operand for every kernel.
//
// The memory is sized once, at instantiation: scratch (SIMD_SCRATCH_BYTES) + arena (MARFT_WASM_ARENA_MB,
// default 768; 0 turns the arena off). Untouched pages cost no resident memory. It is a shared
// memory: the attention workers (attention-pool.ts) instantiate the kernels over it in their own
// threads (attachWorkerKernels), each with its own scratch region, a block of the main thread's arena. Each method returns
// false when a chunk's copies do not fit the scratch region (a row longer than about 600K floats);
// the callers (kernels/*.ts) then run their JavaScript loops, which are also the tests' reference.
// simdKernels() returns null when WebAssembly SIMD is unavailable or MARFT_SIMD=0 is set.
import { KERNELS_WASM_BASE64 } from './kernels-binary.ts';
import { WasmArena } from './arena.ts';

interface Exports {
  exp_f32(x: number, out: number, n: number): void;
  swiglu_fwd(g: number, u: number, h: number, sig: number, n: number): void;
  swiglu_bwd(dh: number, g: number, u: number, sig: number, dg: number, du: number, n: number): void;
  softmax_rows(x: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number, rowMax: number, rowSum: number): void;
  softmax_bwd_rows(p: number, dp: number, rows: number, cols: number, visible0: number, visibleStep: number): void;
  scale_rows(x: number, rows: number, cols: number, coef: number): void;
  gemm_panel(a: number, b: number, c: number, m: number, n: number, k: number): void;
  rope_rows(x: number, tokens: number, heads: number, half: number, cos: number, sin: number, dir: number): void;
  rmsnorm_fwd(x: number, w: number, y: number, rstd: number, rows: number, dim: number, eps: number): void;
  rmsnorm_bwd(dy: number, x: number, w: number, rstd: number, dx: number, dw: number, rows: number, dim: number, accumulate: number, withDw: number): void;
}

/** Floats per operand per chunk of an element-wise kernel (64 KB: several operands fit in L2). */
const CHUNK_FLOATS = 1 << 14;
/** Floats per operand per chunk of a row kernel (whole rows; one row at least). */
const ROW_CHUNK_FLOATS = 1 << 15;
/** A thread's scratch region for copied operands (the main thread's is at the start of the memory). */
export const SIMD_SCRATCH_BYTES = 8 << 20;
const PAGE = 65536;
const DEFAULT_ARENA_MB = 768;

/** Byte layout of one call's scratch operands: regions 16-byte aligned, 4-float padded. */
class Layout {
  private end: number;
  constructor(private readonly start: number) {
    this.end = start;
  }
  f32(n: number): number {
    const at = this.end;
    this.end += Math.ceil(n / 4) * 16;
    return at;
  }
  f64(n: number): number {
    const at = this.end;
    this.end += Math.ceil(n / 2) * 16;
    return at;
  }
  get bytes(): number {
    return this.end - this.start;
  }
}

const round4 = (n: number): number => Math.ceil(n / 4) * 4;

/**
 * One operand of a kernel call: `rows` rows of `width` elements from `offset` (width 0: the whole array,
 * the same for every row, e.g. a norm's weight). A null array is an output nobody reads (scratch only).
 */
interface Operand {
  array: Float32Array | Float64Array | null;
  width: number;
  offset?: number;
  /** The kernel reads it (copied in when not in place). */
  read?: boolean;
  /** The kernel writes it (copied out when not in place). */
  write?: boolean;
}

export class SimdKernels {
  private readonly x: Exports;
  /** The memory's buffer: never grown, so views into it stay valid for the life of the process. */
  readonly buf: SharedArrayBuffer;

  /**
   * @param scratch byte offset of this thread's scratch region (SIMD_SCRATCH_BYTES long)
   * @param arena the main thread's buffer arena; null in the workers (and when turned off)
   */
  constructor(exports: Exports, readonly memory: WebAssembly.Memory, private readonly scratch: number, readonly arena: WasmArena | null) {
    this.x = exports;
    this.buf = memory.buffer as unknown as SharedArrayBuffer;
  }

  /** Whether b lies in this memory, so that kernels (and the attention workers) can use it in place. */
  holds(b: Float32Array | Float64Array): boolean {
    return b.buffer === this.buf;
  }

  /**
   * Runs `kernel(pointers, r0, m)` over chunks of rows [r0, r0 + m). Each operand is passed in place
   * when it lies in this memory (with `lanes`, only from its start, and only when it is a whole number
   * of 4-element vectors or a whole arena block: such kernels round lengths up to a multiple of 4,
   * which must stay inside it), otherwise through the scratch region. Chunks hold at most `chunkFloats` elements of the widest copied operand, one row
   * at least. False (nothing run) when a chunk's copies do not fit the scratch region.
   */
  private run(rows: number, chunkFloats: number, lanes: boolean, ops: Operand[], kernel: (ptr: number[], r0: number, m: number) => void): boolean {
    const arena = this.arena;
    // Four-lane kernels round lengths up to whole vectors: in place only when that stays inside the
    // array (a whole number of vectors) or inside its arena block.
    const inPlace = ops.map((o) => o.array instanceof Float32Array && this.holds(o.array) &&
      (!lanes || (!o.offset && (o.array.length % 4 === 0 || (arena !== null && arena.isBlock(o.array))))));
    let widest = 0;
    ops.forEach((o, i) => { if (!inPlace[i]) widest = Math.max(widest, o.width); });
    const rc = widest === 0 ? rows : Math.max(1, Math.min(rows, Math.floor(chunkFloats / widest)));
    const L = new Layout(this.scratch);
    const region = ops.map((o, i) => {
      if (inPlace[i]) return -1;
      const n = o.width === 0 ? o.array?.length ?? 0 : rc * o.width;
      return o.array instanceof Float64Array ? L.f64(n) : L.f32(n);
    });
    if (L.bytes > SIMD_SCRATCH_BYTES) return false;
    const view = ops.map((o, i) => {
      if (region[i]! < 0 || !o.array) return null;
      const n = o.width === 0 ? o.array.length : rc * o.width;
      return o.array instanceof Float64Array ? new Float64Array(this.buf, region[i], n) : new Float32Array(this.buf, region[i], n);
    });
    ops.forEach((o, i) => { if (o.width === 0 && o.read && view[i]) view[i]!.set(o.array!); });
    const ptr = new Array<number>(ops.length);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0);
      ops.forEach((o, i) => {
        const from = (o.offset ?? 0) + (o.width === 0 ? 0 : r0 * o.width);
        if (inPlace[i]) ptr[i] = o.array!.byteOffset + from * o.array!.BYTES_PER_ELEMENT;
        else {
          ptr[i] = region[i]!;
          if (o.width > 0 && o.read && view[i]) view[i]!.set(o.array!.subarray(from, from + m * o.width));
        }
      });
      kernel(ptr, r0, m);
      ops.forEach((o, i) => {
        if (inPlace[i] || o.width === 0 || !o.write || !view[i]) return;
        o.array!.set(view[i]!.subarray(0, m * o.width), (o.offset ?? 0) + r0 * o.width);
      });
    }
    ops.forEach((o, i) => { if (o.width === 0 && o.write && view[i]) o.array!.set(view[i]!); });
    return true;
  }

  /** out[i] = e^x[i] through the kernels' exp (tests measure its accuracy). */
  exp(x: Float32Array): Float32Array {
    const out = new Float32Array(x.length);
    this.run(x.length, CHUNK_FLOATS, true, [{ array: x, width: 1, read: true }, { array: out, width: 1, write: true }],
      ([px, po], _r0, m) => this.x.exp_f32(px!, po!, round4(m)));
    return out;
  }

  swigluForward(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sig: Float32Array | null): boolean {
    return this.run(n, CHUNK_FLOATS, true, [
      { array: g, width: 1, read: true }, { array: u, width: 1, read: true },
      { array: h, width: 1, write: true }, { array: sig, width: 1, write: true },
    ], ([pg, pu, ph, ps], _r0, m) => this.x.swiglu_fwd(pg!, pu!, ph!, ps!, round4(m)));
  }

  swigluBackward(dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number): boolean {
    return this.run(n, CHUNK_FLOATS, true, [
      { array: dh, width: 1, read: true }, { array: g, width: 1, read: true }, { array: u, width: 1, read: true },
      { array: sig, width: 1, read: true }, { array: dg, width: 1, write: true }, { array: du, width: 1, write: true },
    ], ([pdh, pg, pu, ps, pdg, pdu], _r0, m) => this.x.swiglu_bwd(pdh!, pg!, pu!, ps!, pdg!, pdu!, round4(m)));
  }

  /**
   * In place on x [rows, cols] from `offset`: row r becomes softmax((x − max)·invT) over its first
   * min(cols, visible0 + r·visibleStep) entries, zeros after them. rowMax[r] and rowSum[r] receive the
   * row's maximum and Σ e^((x − max)·invT) (so log Σ e^(x·invT) = max·invT + log rowSum).
   */
  softmaxRows(
    x: Float32Array, offset: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number,
    rowMax: Float32Array, rowSum: Float64Array,
  ): boolean {
    return this.run(rows, ROW_CHUNK_FLOATS, false, [
      { array: x, width: cols, offset, read: true, write: true },
      { array: rowMax, width: 1, write: true }, { array: rowSum, width: 1, write: true },
    ], ([px, pm, ps], r0, m) => this.x.softmax_rows(px!, m, cols, visible0 + r0 * visibleStep, visibleStep, invT, pm!, ps!));
  }

  /** dp ← p ⊙ (dp − Σ p·dp) per row over the visible entries (as softmaxRows), 0 after them; in place on dp. */
  softmaxBackwardRows(
    p: Float32Array, pOffset: number, dp: Float32Array, dpOffset: number, rows: number, cols: number, visible0: number, visibleStep: number,
  ): boolean {
    return this.run(rows, ROW_CHUNK_FLOATS, false, [
      { array: p, width: cols, offset: pOffset, read: true },
      { array: dp, width: cols, offset: dpOffset, read: true, write: true },
    ], ([pp, pd], r0, m) => this.x.softmax_bwd_rows(pp!, pd!, m, cols, visible0 + r0 * visibleStep, visibleStep));
  }

  /** x[r, :] ·= coef[r], x [rows, cols]. */
  scaleRows(x: Float32Array, rows: number, cols: number, coef: Float32Array): boolean {
    return this.run(rows, ROW_CHUNK_FLOATS, false, [
      { array: x, width: cols, read: true, write: true }, { array: coef, width: 1, read: true },
    ], ([px, pc], _r0, m) => this.x.scale_rows(px!, m, cols, pc!));
  }

  /**
   * C += alpha·op(A)·op(B) in cblas_sgemm's row-major conventions (offsets and leading dimensions in
   * elements; blas.ts applies beta first): the matrix kernel when no BLAS library is loaded. op(B) is packed into a zero-padded
   * row-major panel (256 of K × 256 columns) once for all rows, op(A) with alpha applied into 64-row
   * panels, and gemm_panel adds their product four rows by eight columns at a time into a copy of the
   * C block, which then goes back into C.
   */
  sgemm(
    transA: boolean, transB: boolean, M: number, N: number, K: number,
    alpha: number, A: Float32Array, aOff: number, lda: number,
    B: Float32Array, bOff: number, ldb: number,
    C: Float32Array, cOff: number, ldc: number,
  ): void {
    if (K <= 0 || alpha === 0) return;
    const MB = 64, NB = 256, KB = 256;
    const L = new Layout(this.scratch);
    const pa = L.f32(MB * KB), pb = L.f32(KB * NB), pc = L.f32(MB * NB);
    const buf = this.buf;
    const Ap = new Float32Array(buf, pa, MB * KB), Bp = new Float32Array(buf, pb, KB * NB), Cp = new Float32Array(buf, pc, MB * NB);
    for (let n0 = 0; n0 < N; n0 += NB) {
      const nb = Math.min(NB, N - n0), nbP = Math.ceil(nb / 8) * 8;
      for (let k0 = 0; k0 < K; k0 += KB) {
        const kb = Math.min(KB, K - k0);
        // B panel [kb × nbP] = op(B)[k0…, n0…], columns past nb zero; packed once for every row panel.
        if (!transB) {
          for (let p = 0; p < kb; p++) {
            const src = bOff + (k0 + p) * ldb + n0;
            Bp.set(B.subarray(src, src + nb), p * nbP);
          }
        } else {
          // Bᵀ's rows are contiguous: read them in order, write down the panel's columns.
          for (let j = 0; j < nb; j++) {
            const src = bOff + (n0 + j) * ldb + k0;
            for (let p = 0, dst = j; p < kb; p++, dst += nbP) Bp[dst] = B[src + p]!;
          }
        }
        if (nbP > nb) for (let p = 0; p < kb; p++) Bp.fill(0, p * nbP + nb, (p + 1) * nbP);
        for (let m0 = 0; m0 < M; m0 += MB) {
          const mb = Math.min(MB, M - m0), mbP = Math.ceil(mb / 4) * 4;
          // A panel [mbP × kb] = alpha · op(A)[m0…, k0…], rows past mb zero
          for (let i = 0; i < mb; i++) {
            const dst = i * kb;
            if (!transA) {
              const src = aOff + (m0 + i) * lda + k0;
              Ap.set(A.subarray(src, src + kb), dst);
              if (alpha !== 1) for (let p = dst; p < dst + kb; p++) Ap[p]! *= alpha;
            } else {
              for (let p = 0; p < kb; p++) Ap[dst + p] = alpha * A[aOff + (k0 + p) * lda + m0 + i]!;
            }
          }
          Ap.fill(0, mb * kb, mbP * kb);
          // C block in, accumulate, C block out (padding rows and columns are never copied back).
          for (let i = 0; i < mb; i++) {
            const src = cOff + (m0 + i) * ldc + n0;
            Cp.set(C.subarray(src, src + nb), i * nbP);
          }
          this.x.gemm_panel(pa, pb, pc, mbP, nbP, kb);
          for (let i = 0; i < mb; i++) C.set(Cp.subarray(i * nbP, i * nbP + nb), cOff + (m0 + i) * ldc + n0);
        }
      }
    }
  }

  /**
   * RoPE in place on rows [row0, row0 + tokens) of x [rows, heads, 2·half], whose positions' table rows
   * are cos/sin [tokens, half] (direction −1 rotates back). half a multiple of 4; false otherwise.
   */
  ropeRows(x: Float32Array, row0: number, tokens: number, heads: number, half: number, cos: Float32Array, sin: Float32Array, direction: 1 | -1): boolean {
    if (half % 4 !== 0) return false;
    const width = heads * 2 * half;
    return this.run(tokens, ROW_CHUNK_FLOATS, false, [
      { array: x, width, offset: row0 * width, read: true, write: true },
      { array: cos, width: half, read: true }, { array: sin, width: half, read: true },
    ], ([px, pc, ps], _r0, m) => this.x.rope_rows(px!, m, heads, half, pc!, ps!, direction));
  }

  rmsnormForward(x: Float32Array, w: Float32Array, y: Float32Array, rstd: Float32Array | null, rows: number, dim: number, eps: number): boolean {
    return this.run(rows, ROW_CHUNK_FLOATS, false, [
      { array: x, width: dim, read: true }, { array: w, width: 0, read: true },
      { array: y, width: dim, write: true }, { array: rstd, width: 1, write: true },
    ], ([px, pw, py, pr], _r0, m) => this.x.rmsnorm_fwd(px!, pw!, py!, pr!, m, dim, eps));
  }

  rmsnormBackward(
    dy: Float32Array, x: Float32Array, w: Float32Array, rstd: Float32Array, dx: Float32Array | null, dw: Float32Array | null,
    rows: number, dim: number, accumulate: boolean,
  ): boolean {
    return this.run(rows, ROW_CHUNK_FLOATS, false, [
      { array: dy, width: dim, read: true }, { array: x, width: dim, read: true }, { array: w, width: 0, read: true },
      { array: rstd, width: 1, read: true }, { array: dx, width: dim, read: accumulate, write: true },
      { array: dw, width: 0, read: true, write: true },
    ], ([pdy, px, pw, pr, pdx, pdw], _r0, m) => this.x.rmsnorm_bwd(pdy!, px!, pw!, pr!, pdx!, pdw!, m, dim, accumulate ? 1 : 0, dw ? 1 : 0));
  }
}

let instance: SimdKernels | null | undefined;

function arenaBytes(): number {
  const raw = process.env.MARFT_WASM_ARENA_MB;
  const mb = raw === undefined || raw === '' ? DEFAULT_ARENA_MB : Number(raw);
  if (!Number.isFinite(mb) || mb < 0 || mb > 4090) {
    throw new Error(`MARFT_WASM_ARENA_MB must be a number of megabytes from 0 to 4090, got '${raw}'`);
  }
  return Math.floor(mb) * 1024 * 1024;
}

function compileKernels(): WebAssembly.Module {
  return new WebAssembly.Module(new Uint8Array(Buffer.from(KERNELS_WASM_BASE64, 'base64')));
}

function instantiate(mod: WebAssembly.Module, memory: WebAssembly.Memory): Exports {
  return new WebAssembly.Instance(mod, { env: { memory } }).exports as unknown as Exports;
}

/** The SIMD kernels, or null (MARFT_SIMD=0, or no WebAssembly SIMD in this runtime: one notice). */
export function simdKernels(): SimdKernels | null {
  if (instance !== undefined) return instance;
  if (process.env.MARFT_SIMD === '0') return (instance = null);
  let mod: WebAssembly.Module;
  try {
    mod = compileKernels();
  } catch (e) {
    process.stderr.write(`marft: WebAssembly SIMD kernels unavailable (${(e as Error).message}); using JavaScript loops.\n`);
    return (instance = null);
  }
  // A host that refuses the memory (a strict overcommit policy, a memory limit) gets a smaller arena,
  // down to none, with one notice: the kernels then copy their operands but still run.
  const wanted = arenaBytes();
  for (let bytes = wanted; ; bytes = bytes > 16 << 20 ? Math.floor(bytes / 2 / PAGE) * PAGE : 0) {
    try {
      const total = SIMD_SCRATCH_BYTES + Math.ceil(bytes / PAGE) * PAGE;
      // Sized once (initial = maximum) and never grown: growing would detach the views handed out.
      const memory = new WebAssembly.Memory({ initial: total / PAGE, maximum: total / PAGE, shared: true });
      const arena = bytes > 0 ? new WasmArena(memory, SIMD_SCRATCH_BYTES, total) : null;
      instance = new SimdKernels(instantiate(mod, memory), memory, 0, arena);
      if (bytes < wanted) {
        process.stderr.write(`marft: could not reserve a ${Math.round(wanted / 2 ** 20)} MB WebAssembly arena; using ${Math.round(bytes / 2 ** 20)} MB (MARFT_WASM_ARENA_MB).\n`);
      }
      return instance;
    } catch (e) {
      if (bytes === 0) {
        process.stderr.write(`marft: WebAssembly SIMD kernels unavailable (${(e as Error).message}); using JavaScript loops.\n`);
        return (instance = null);
      }
    }
  }
}

/**
 * In an attention worker thread: the kernels over the main thread's memory, with the scratch region
 * at byte offset `scratch` (a block the main thread took from its arena for this worker). Every later
 * simdKernels() in this thread returns them.
 */
export function attachWorkerKernels(memory: WebAssembly.Memory, scratch: number): SimdKernels {
  if (instance) throw new Error('attachWorkerKernels: this thread already has its kernels');
  instance = new SimdKernels(instantiate(compileKernels(), memory), memory, scratch, null);
  return instance;
}
