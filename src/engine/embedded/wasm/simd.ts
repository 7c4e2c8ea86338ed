// The WebAssembly SIMD kernels (kernels.wat) behind plain Float32Array signatures.
//
// The engine's tensors are ordinary Float32Arrays (BLAS reads them in place through koffi), and a
// WebAssembly module can only address its own memory, so each call copies its operands into the
// module's memory in chunks small enough to stay in the core's cache (about 64K floats per
// operand), runs the kernel, and copies the results out. The copies are memcpy-speed; the kernels
// replace JavaScript loops that V8 runs one bounds-checked element at a time (docs/performance.md).
//
// simdKernels() returns null when WebAssembly SIMD is unavailable or MARFT_SIMD=0 is set; the
// callers (kernels/*.ts) then run their JavaScript loops, which are also the tests' reference.
import { KERNELS_WASM_BASE64 } from './kernels-binary.ts';

interface Exports {
  memory: WebAssembly.Memory;
  exp_f32(x: number, out: number, n: number): void;
  swiglu_fwd(g: number, u: number, h: number, sig: number, n: number): void;
  swiglu_bwd(dh: number, g: number, u: number, sig: number, dg: number, du: number, n: number): void;
  softmax_rows(x: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number, rowMax: number, rowSum: number): void;
  softmax_bwd_rows(p: number, dp: number, rows: number, cols: number, visible0: number, visibleStep: number): void;
  scale_rows(x: number, rows: number, cols: number, coef: number): void;
  rmsnorm_fwd(x: number, w: number, y: number, rstd: number, rows: number, dim: number, eps: number): void;
  rmsnorm_bwd(dy: number, x: number, w: number, rstd: number, dx: number, dw: number, rows: number, dim: number, accumulate: number, withDw: number): void;
}

/** Floats per operand per chunk of an element-wise kernel (64 KB: several operands fit in L2). */
const CHUNK_FLOATS = 1 << 14;
/** Floats per operand per chunk of a row kernel (whole rows; one row at least). */
const ROW_CHUNK_FLOATS = 1 << 15;

const PAGE = 65536;

/** Byte layout of one call's operands in the module's memory: regions 16-byte aligned, 4-float padded. */
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

export class SimdKernels {
  private readonly x: Exports;
  constructor(exports: Exports) {
    this.x = exports;
  }

  /** Grows the memory to hold `bytes`; views must be made after this (growing detaches old ones). */
  private reserve(bytes: number): ArrayBuffer {
    const mem = this.x.memory;
    if (mem.buffer.byteLength < bytes) mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / PAGE));
    return mem.buffer;
  }

  /** out[i] = e^x[i] through the kernels' exp (tests measure its accuracy). */
  exp(x: Float32Array): Float32Array {
    const L = new Layout();
    const px = L.f32(x.length), po = L.f32(x.length);
    const buf = this.reserve(L.bytes);
    new Float32Array(buf, px, x.length).set(x);
    this.x.exp_f32(px, po, Math.ceil(x.length / 4) * 4);
    return new Float32Array(buf, po, x.length).slice();
  }

  swigluForward(g: Float32Array, u: Float32Array, h: Float32Array, n: number, sig: Float32Array | null): void {
    const c = Math.min(n, CHUNK_FLOATS);
    const L = new Layout();
    const pg = L.f32(c), pu = L.f32(c), ph = L.f32(c), ps = L.f32(c);
    const buf = this.reserve(L.bytes);
    const G = new Float32Array(buf, pg, c), U = new Float32Array(buf, pu, c);
    const Hh = new Float32Array(buf, ph, c), S = new Float32Array(buf, ps, c);
    for (let o = 0; o < n; o += c) {
      const m = Math.min(c, n - o);
      G.set(g.subarray(o, o + m));
      U.set(u.subarray(o, o + m));
      this.x.swiglu_fwd(pg, pu, ph, ps, Math.ceil(m / 4) * 4);
      h.set(m === c ? Hh : Hh.subarray(0, m), o);
      if (sig) sig.set(m === c ? S : S.subarray(0, m), o);
    }
  }

  swigluBackward(dh: Float32Array, g: Float32Array, u: Float32Array, sig: Float32Array, dg: Float32Array, du: Float32Array, n: number): void {
    const c = Math.min(n, CHUNK_FLOATS);
    const L = new Layout();
    const pdh = L.f32(c), pg = L.f32(c), pu = L.f32(c), ps = L.f32(c), pdg = L.f32(c), pdu = L.f32(c);
    const buf = this.reserve(L.bytes);
    const DH = new Float32Array(buf, pdh, c), G = new Float32Array(buf, pg, c), U = new Float32Array(buf, pu, c);
    const S = new Float32Array(buf, ps, c), DG = new Float32Array(buf, pdg, c), DU = new Float32Array(buf, pdu, c);
    for (let o = 0; o < n; o += c) {
      const m = Math.min(c, n - o);
      DH.set(dh.subarray(o, o + m));
      G.set(g.subarray(o, o + m));
      U.set(u.subarray(o, o + m));
      S.set(sig.subarray(o, o + m));
      this.x.swiglu_bwd(pdh, pg, pu, ps, pdg, pdu, Math.ceil(m / 4) * 4);
      dg.set(m === c ? DG : DG.subarray(0, m), o);
      du.set(m === c ? DU : DU.subarray(0, m), o);
    }
  }

  /**
   * In place on x [rows, cols] from `offset`: row r becomes softmax((x − max)·invT) over its first
   * min(cols, visible0 + r·visibleStep) entries, zeros after them. rowMax[r] and rowSum[r] receive the
   * row's maximum and Σ e^((x − max)·invT) (so log Σ e^(x·invT) = max·invT + log rowSum).
   */
  softmaxRows(
    x: Float32Array, offset: number, rows: number, cols: number, visible0: number, visibleStep: number, invT: number,
    rowMax: Float32Array, rowSum: Float64Array,
  ): void {
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const px = L.f32(rc * cols), pm = L.f32(rc), ps = L.f64(rc);
    const buf = this.reserve(L.bytes);
    const X = new Float32Array(buf, px, rc * cols), M = new Float32Array(buf, pm, rc), S = new Float64Array(buf, ps, rc);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols, at = offset + r0 * cols;
      X.set(x.subarray(at, at + len));
      this.x.softmax_rows(px, m, cols, visible0 + r0 * visibleStep, visibleStep, invT, pm, ps);
      x.set(len === X.length ? X : X.subarray(0, len), at);
      rowMax.set(M.subarray(0, m), r0);
      rowSum.set(S.subarray(0, m), r0);
    }
  }

  /** dp ← p ⊙ (dp − Σ p·dp) per row over the visible entries (as softmaxRows), 0 after them; in place on dp. */
  softmaxBackwardRows(
    p: Float32Array, pOffset: number, dp: Float32Array, dpOffset: number, rows: number, cols: number, visible0: number, visibleStep: number,
  ): void {
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const pp = L.f32(rc * cols), pd = L.f32(rc * cols);
    const buf = this.reserve(L.bytes);
    const P = new Float32Array(buf, pp, rc * cols), D = new Float32Array(buf, pd, rc * cols);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols;
      P.set(p.subarray(pOffset + r0 * cols, pOffset + r0 * cols + len));
      D.set(dp.subarray(dpOffset + r0 * cols, dpOffset + r0 * cols + len));
      this.x.softmax_bwd_rows(pp, pd, m, cols, visible0 + r0 * visibleStep, visibleStep);
      dp.set(len === D.length ? D : D.subarray(0, len), dpOffset + r0 * cols);
    }
  }

  /** x[r, :] ·= coef[r], x [rows, cols]. */
  scaleRows(x: Float32Array, rows: number, cols: number, coef: Float32Array): void {
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / cols)));
    const L = new Layout();
    const px = L.f32(rc * cols), pc = L.f32(rc);
    const buf = this.reserve(L.bytes);
    const X = new Float32Array(buf, px, rc * cols), C = new Float32Array(buf, pc, rc);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * cols;
      X.set(x.subarray(r0 * cols, r0 * cols + len));
      C.set(coef.subarray(r0, r0 + m));
      this.x.scale_rows(px, m, cols, pc);
      x.set(len === X.length ? X : X.subarray(0, len), r0 * cols);
    }
  }

  rmsnormForward(x: Float32Array, w: Float32Array, y: Float32Array, rstd: Float32Array | null, rows: number, dim: number, eps: number): void {
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / dim)));
    const L = new Layout();
    const px = L.f32(rc * dim), pw = L.f32(dim), py = L.f32(rc * dim), pr = L.f32(rc);
    const buf = this.reserve(L.bytes);
    const X = new Float32Array(buf, px, rc * dim), Y = new Float32Array(buf, py, rc * dim), R = new Float32Array(buf, pr, rc);
    new Float32Array(buf, pw, dim).set(w);
    for (let r0 = 0; r0 < rows; r0 += rc) {
      const m = Math.min(rc, rows - r0), len = m * dim;
      X.set(x.subarray(r0 * dim, r0 * dim + len));
      this.x.rmsnorm_fwd(px, pw, py, pr, m, dim, eps);
      y.set(len === Y.length ? Y : Y.subarray(0, len), r0 * dim);
      if (rstd) rstd.set(R.subarray(0, m), r0);
    }
  }

  rmsnormBackward(
    dy: Float32Array, x: Float32Array, w: Float32Array, rstd: Float32Array, dx: Float32Array | null, dw: Float32Array | null,
    rows: number, dim: number, accumulate: boolean,
  ): void {
    const rc = Math.max(1, Math.min(rows, Math.floor(ROW_CHUNK_FLOATS / dim)));
    const L = new Layout();
    const pdy = L.f32(rc * dim), px = L.f32(rc * dim), pw = L.f32(dim), pr = L.f32(rc), pdx = L.f32(rc * dim), pdw = L.f32(dim);
    const buf = this.reserve(L.bytes);
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
  }
}

let instance: SimdKernels | null | undefined;

/** The SIMD kernels, or null (MARFT_SIMD=0, or no WebAssembly SIMD in this runtime: one notice). */
export function simdKernels(): SimdKernels | null {
  if (instance !== undefined) return instance;
  if (process.env.MARFT_SIMD === '0') return (instance = null);
  try {
    const mod = new WebAssembly.Module(new Uint8Array(Buffer.from(KERNELS_WASM_BASE64, 'base64')));
    instance = new SimdKernels(new WebAssembly.Instance(mod, {}).exports as unknown as Exports);
  } catch (e) {
    process.stderr.write(`marft: WebAssembly SIMD kernels unavailable (${(e as Error).message}); using JavaScript loops.\n`);
    instance = null;
  }
  return instance;
}
