// The WebAssembly SIMD kernels (kernels.wat) behind plain Float32Array signatures.
//
// A WebAssembly module can only address its own memory. The engine's large buffers come from an
// arena inside that memory (wasm/arena.ts, through buffer-pool.ts), and when every large operand of
// a call lies there the kernel works on them in place. Otherwise (arena full, or an operand from
// elsewhere) the call copies its operands into a scratch region in chunks small enough to stay in
// the core's cache (about 64K floats per operand), runs the kernel, and copies the results out.
// Small operands (norm weights, per-row statistics) always go through the scratch region.
//
// The memory is sized once, at instantiation: scratch (SCRATCH_BYTES) + arena (MARFT_WASM_ARENA_MB,
// default 768; 0 turns the arena off). Untouched pages cost no resident memory. Each method returns
// false when an operand does not fit the scratch region (a row longer than about 600K floats); the
// callers (kernels/*.ts) then run their JavaScript loops, which are also the tests' reference.
// simdKernels() returns null when WebAssembly SIMD is unavailable or MARFT_SIMD=0 is set.
import { KERNELS_WASM_BASE64 } from './kernels-binary.ts';
import { WasmArena } from './arena.ts';

interface Exports {
  memory: WebAssembly.Memory;
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
/** The scratch region at the start of the memory, for copied operands. */
const SCRATCH_BYTES = 8 << 20;
const PAGE = 65536;
const DEFAULT_ARENA_MB = 768;

/** Byte layout of one call's scratch operands: regions 16-byte aligned, 4-float padded. */
class Layout {
  private end = 0;
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
    return this.end;
  }
}

const round4 = (n: number): number => Math.ceil(n / 4) * 4;

export class SimdKernels {
  private readonly x: Exports;
  private readonly buf: ArrayBuffer;
  readonly arena: WasmArena | null;

  constructor(exports: Exports, arenaBytes: number) {
    this.x = exports;
    const mem = exports.memory;
    const total = SCRATCH_BYTES + Math.ceil(arenaBytes / PAGE) * PAGE;
    if (mem.buffer.byteLength < total) mem.grow((total - mem.buffer.byteLength) / PAGE);
    // Never grown again: views into the memory stay valid for the life of the process.
    this.buf = mem.buffer;
    this.arena = arenaBytes > 0 ? new WasmArena(mem, SCRATCH_BYTES, total) : null;
  }

  /** Whether the scratch region holds a call's layout. */
  private fits(L: Layout): boolean {
    return L.bytes <= SCRATCH_BYTES;
  }

  private inPlace(...arrays: Float32Array[]): boolean {
    if (!this.arena) return false;
    for (const a of arrays) if (!this.arena.contains(a)) return false;
    return true;
  }

  private blocks(...arrays: Float32Array[]): boolean {
    if (!this.arena) return false;
    for (const a of arrays) if (!this.arena.isBlock(a)) return false;
    return true;
  }

  /** out[i] = e^x[i] through the kernels' exp (tests measure its accuracy). */
  exp(x: Float32Array): Float32Array {
    const L = new Layout();
    const px = L.f32(x.length), po = L.f32(x.length);
    if (!this.fits(L)) throw new Error(`SimdKernels.exp: at most ${SCRATCH_BYTES / 8} floats`);
    new Float32Array(this.buf, px, x.length).set(x);
    this.x.exp_f32(px, po, round4(x.length));
    return new Float32Array(this.buf, po, x.length).slice();
  }

  swigluForward(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sig: Float32Array | null): boolean {
    if (sig && n === g.length && this.blocks(g, u, h, sig)) {
      this.x.swiglu_fwd(g.byteOffset, u.byteOffset, h.byteOffset, sig.byteOffset, round4(n));
      return true;
    }
    const c = Math.min(n, CHUNK_FLOATS);
    const L = new Layout();
    const pg = L.f32(c), pu = L.f32(c), ph = L.f32(c), ps = L.f32(c);
    const buf = this.buf;
    const G = new Float32Array(buf, pg, c), U = new Float32Array(buf, pu, c);
    const Hh = new Float32Array(buf, ph, c), S = new Float32Array(buf, ps, c);
    for (let o = 0; o < n; o += c) {
      const m = Math.min(c, n - o);
      G.set(g.subarray(o, o + m));
      U.set(u.subarray(o, o + m));
      this.x.swiglu_fwd(pg, pu, ph, ps, round4(m));
      h.set(m === c ? Hh : Hh.subarray(0, m), o);
      if (sig) sig.set(m === c ? S : S.subarray(0, m), o);
    }
    return true;
  }

  swigluBackward(dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number): boolean {
    if (n === g.length && this.blocks(dh, g, u, sig, dg, du)) {
      this.x.swiglu_bwd(dh.byteOffset, g.byteOffset, u.byteOffset, sig.byteOffset, dg.byteOffset, du.byteOffset, round4(n));
      return true;
    }
    const c = Math.min(n, CHUNK_FLOATS);
    const L = new Layout();
    const pdh = L.f32(c), pg = L.f32(c), pu = L.f32(c), ps = L.f32(c), pdg = L.f32(c), pdu = L.f32(c);
    const buf = this.buf;
    const DH = new Float32Array(buf, pdh, c), G = new Float32Array(buf, pg, c), U = new Float32Array(buf, pu, c);
    const S = new Float32Array(buf, ps, c), DG = new Float32Array(buf, pdg, c), DU = new Float32Array(buf, pdu, c);
    for (let o = 0; o < n; o += c) {
      const m = Math.min(c, n - o);
      DH.set(dh.subarray(o, o + m));
      G.set(g.subarray(o, o + m));
      U.set(u.subarray(o, o + m));
      S.set(sig.subarray(o, o + m));
      this.x.swiglu_bwd(pdh, pg, pu, ps, pdg, pdu, round4(m));
      dg.set(m === c ? DG : DG.subarray(0, m), o);
      du.set(m === c ? DU : DU.subarray(0, m), o);
    }
    return true;
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
    if (this.inPlace(x)) {
      const L = new Layout();
      const pm = L.f32(rows), ps = L.f64(rows);
      if (this.fits(L)) {
        this.x.softmax_rows(x.byteOffset + 4 * offset, rows, cols, visible0, visibleStep, invT, pm, ps);
        rowMax.set(new Float32Array(this.buf, pm, rows));
        rowSum.set(new Float64Array(this.buf, ps, rows));
        return true;
      }
    }
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const px = L.f32(rc * cols), pm = L.f32(rc), ps = L.f64(rc);
    if (!this.fits(L)) return false;
    const buf = this.buf;
    const X = new Float32Array(buf, px, rc * cols), M = new Float32Array(buf, pm, rc), S = new Float64Array(buf, ps, rc);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols, at = offset + r0 * cols;
      X.set(x.subarray(at, at + len));
      this.x.softmax_rows(px, m, cols, visible0 + r0 * visibleStep, visibleStep, invT, pm, ps);
      x.set(len === X.length ? X : X.subarray(0, len), at);
      rowMax.set(M.subarray(0, m), r0);
      rowSum.set(S.subarray(0, m), r0);
    }
    return true;
  }

  /** dp ← p ⊙ (dp − Σ p·dp) per row over the visible entries (as softmaxRows), 0 after them; in place on dp. */
  softmaxBackwardRows(
    p: Float32Array, pOffset: number, dp: Float32Array, dpOffset: number, rows: number, cols: number, visible0: number, visibleStep: number,
  ): boolean {
    if (this.inPlace(p, dp)) {
      this.x.softmax_bwd_rows(p.byteOffset + 4 * pOffset, dp.byteOffset + 4 * dpOffset, rows, cols, visible0, visibleStep);
      return true;
    }
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const pp = L.f32(rc * cols), pd = L.f32(rc * cols);
    if (!this.fits(L)) return false;
    const buf = this.buf;
    const P = new Float32Array(buf, pp, rc * cols), D = new Float32Array(buf, pd, rc * cols);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols;
      P.set(p.subarray(pOffset + r0 * cols, pOffset + r0 * cols + len));
      D.set(dp.subarray(dpOffset + r0 * cols, dpOffset + r0 * cols + len));
      this.x.softmax_bwd_rows(pp, pd, m, cols, visible0 + r0 * visibleStep, visibleStep);
      dp.set(len === D.length ? D : D.subarray(0, len), dpOffset + r0 * cols);
    }
    return true;
  }

  /** x[r, :] ·= coef[r], x [rows, cols]. */
  scaleRows(x: Float32Array, rows: number, cols: number, coef: Float32Array): boolean {
    if (this.inPlace(x)) {
      const L = new Layout();
      const pc = L.f32(rows);
      if (this.fits(L)) {
        new Float32Array(this.buf, pc, rows).set(coef.subarray(0, rows));
        this.x.scale_rows(x.byteOffset, rows, cols, pc);
        return true;
      }
    }
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const px = L.f32(rc * cols), pc = L.f32(rc);
    if (!this.fits(L)) return false;
    const buf = this.buf;
    const X = new Float32Array(buf, px, rc * cols), C = new Float32Array(buf, pc, rc);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols;
      X.set(x.subarray(r0 * cols, r0 * cols + len));
      C.set(coef.subarray(r0, r0 + m));
      this.x.scale_rows(px, m, cols, pc);
      x.set(len === X.length ? X : X.subarray(0, len), r0 * cols);
    }
    return true;
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
    const L = new Layout();
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
   * are cos/sin [tokens, half] (direction −1 rotates back). Only in place (x in the arena) and for half a
   * multiple of 4; false otherwise.
   */
  ropeRows(x: Float32Array, row0: number, tokens: number, heads: number, half: number, cos: Float32Array, sin: Float32Array, direction: 1 | -1): boolean {
    if (half % 4 !== 0 || !this.inPlace(x)) return false;
    const L = new Layout();
    const pc = L.f32(tokens * half), ps = L.f32(tokens * half);
    if (!this.fits(L)) return false;
    new Float32Array(this.buf, pc, tokens * half).set(cos.subarray(0, tokens * half));
    new Float32Array(this.buf, ps, tokens * half).set(sin.subarray(0, tokens * half));
    this.x.rope_rows(x.byteOffset + 4 * row0 * heads * 2 * half, tokens, heads, half, pc, ps, direction);
    return true;
  }

  rmsnormForward(x: Float32Array, w: Float32Array, y: Float32Array, rstd: Float32Array | null, rows: number, dim: number, eps: number): boolean {
    if (this.inPlace(x, y)) {
      const L = new Layout();
      const pw = L.f32(dim), pr = L.f32(rows);
      if (this.fits(L)) {
        new Float32Array(this.buf, pw, dim).set(w);
        this.x.rmsnorm_fwd(x.byteOffset, pw, y.byteOffset, pr, rows, dim, eps);
        if (rstd) rstd.set(new Float32Array(this.buf, pr, rows));
        return true;
      }
    }
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / dim)));
    const L = new Layout();
    const px = L.f32(rc * dim), pw = L.f32(dim), py = L.f32(rc * dim), pr = L.f32(rc);
    if (!this.fits(L)) return false;
    const buf = this.buf;
    const X = new Float32Array(buf, px, rc * dim), Y = new Float32Array(buf, py, rc * dim), R = new Float32Array(buf, pr, rc);
    new Float32Array(buf, pw, dim).set(w);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * dim;
      X.set(x.subarray(r0 * dim, r0 * dim + len));
      this.x.rmsnorm_fwd(px, pw, py, pr, m, dim, eps);
      y.set(len === Y.length ? Y : Y.subarray(0, len), r0 * dim);
      if (rstd) rstd.set(R.subarray(0, m), r0);
    }
    return true;
  }

  rmsnormBackward(
    dy: Float32Array, x: Float32Array, w: Float32Array, rstd: Float32Array, dx: Float32Array | null, dw: Float32Array | null,
    rows: number, dim: number, accumulate: boolean,
  ): boolean {
    if (dx && this.inPlace(dy, x, dx)) {
      const L = new Layout();
      const pw = L.f32(dim), pr = L.f32(rows), pdw = L.f32(dim);
      if (this.fits(L)) {
        const buf = this.buf;
        new Float32Array(buf, pw, dim).set(w);
        new Float32Array(buf, pr, rows).set(rstd.subarray(0, rows));
        if (dw) new Float32Array(buf, pdw, dim).set(dw);
        this.x.rmsnorm_bwd(dy.byteOffset, x.byteOffset, pw, pr, dx.byteOffset, pdw, rows, dim, accumulate ? 1 : 0, dw ? 1 : 0);
        if (dw) dw.set(new Float32Array(buf, pdw, dim));
        return true;
      }
    }
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / dim)));
    const L = new Layout();
    const pdy = L.f32(rc * dim), px = L.f32(rc * dim), pw = L.f32(dim), pr = L.f32(rc), pdx = L.f32(rc * dim), pdw = L.f32(dim);
    if (!this.fits(L)) return false;
    const buf = this.buf;
    const DY = new Float32Array(buf, pdy, rc * dim), X = new Float32Array(buf, px, rc * dim), R = new Float32Array(buf, pr, rc);
    const DX = new Float32Array(buf, pdx, rc * dim), DW = new Float32Array(buf, pdw, dim);
    new Float32Array(buf, pw, dim).set(w);
    if (dw) DW.set(dw);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * dim;
      DY.set(dy.subarray(r0 * dim, r0 * dim + len));
      X.set(x.subarray(r0 * dim, r0 * dim + len));
      R.set(rstd.subarray(r0, r0 + m));
      if (dx && accumulate) DX.set(dx.subarray(r0 * dim, r0 * dim + len));
      this.x.rmsnorm_bwd(pdy, px, pw, pr, pdx, pdw, m, dim, accumulate ? 1 : 0, dw ? 1 : 0);
      if (dx) dx.set(len === DX.length ? DX : DX.subarray(0, len), r0 * dim);
    }
    if (dw) dw.set(DW);
    return true;
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

/** The SIMD kernels, or null (MARFT_SIMD=0, or no WebAssembly SIMD in this runtime: one notice). */
export function simdKernels(): SimdKernels | null {
  if (instance !== undefined) return instance;
  if (process.env.MARFT_SIMD === '0') return (instance = null);
  let mod: WebAssembly.Module;
  try {
    mod = new WebAssembly.Module(new Uint8Array(Buffer.from(KERNELS_WASM_BASE64, 'base64')));
  } catch (e) {
    process.stderr.write(`marft: WebAssembly SIMD kernels unavailable (${(e as Error).message}); using JavaScript loops.\n`);
    return (instance = null);
  }
  // A host that refuses the memory (a strict overcommit policy, a memory limit) gets a smaller arena,
  // down to none, with one notice: the kernels then copy their operands but still run.
  const wanted = arenaBytes();
  for (let bytes = wanted; ; bytes = bytes > 16 << 20 ? Math.floor(bytes / 2 / PAGE) * PAGE : 0) {
    try {
      instance = new SimdKernels(new WebAssembly.Instance(mod, {}).exports as unknown as Exports, bytes);
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
