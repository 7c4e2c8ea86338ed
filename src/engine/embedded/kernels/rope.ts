// Rotary position embedding in Hugging Face's rotate_half convention:
//   out[i]       = x[i]·cos θ_i − x[i+d/2]·sin θ_i
//   out[i+d/2]   = x[i+d/2]·cos θ_i + x[i]·sin θ_i,   θ_i = pos · theta^(−2i/d), i < d/2.
// Applied in place to rows laid out [tokens, heads, headDim]; by the WebAssembly SIMD kernel
// (wasm/simd.ts) when available and headDim is a multiple of 8, by the loop below otherwise.
import { simdKernels } from '../wasm/simd.ts';

/** cos/sin tables [positions, headDim/2], computed in float32 as transformers does (inv_freq, then pos·inv_freq). */
export class RopeTable {
  cos: Float32Array;
  sin: Float32Array;
  readonly half: number;
  constructor(readonly headDim: number, readonly theta: number, public positions: number) {
    this.half = headDim / 2;
    ({ cos: this.cos, sin: this.sin } = this.build(positions));
  }

  private build(positions: number): { cos: Float32Array; sin: Float32Array } {
    const half = this.half;
    const cos = new Float32Array(positions * half);
    const sin = new Float32Array(positions * half);
    for (let i = 0; i < half; i++) {
      const invFreq = Math.fround(1 / Math.fround(Math.pow(this.theta, Math.fround((2 * i) / this.headDim))));
      for (let p = 0; p < positions; p++) {
        const angle = Math.fround(p * invFreq);
        cos[p * half + i] = Math.cos(angle);
        sin[p * half + i] = Math.sin(angle);
      }
    }
    return { cos, sin };
  }

  /** Grows the table to cover `positions` (sampling past the initial size). */
  ensure(positions: number): void {
    if (positions <= this.positions) return;
    const size = Math.max(positions, this.positions * 2);
    const t = this.build(size);
    this.cos = t.cos;
    this.sin = t.sin;
    this.positions = size;
  }
}

/**
 * Rotates x [tokens, heads, headDim] at consecutive positions startPos, startPos+1, … in place, by +θ
 * (direction 1) or −θ (direction −1). A rotation's transpose is the rotation by −θ, so the backward
 * pass is the same loop.
 */
function ropeRotate(x: Float32Array, offsetRows: number, tokens: number, heads: number, startPos: number, table: RopeTable, direction: 1 | -1): void {
  table.ensure(startPos + tokens);
  const half = table.half, rows = [startPos * half, (startPos + tokens) * half] as const;
  if (simdKernels()?.ropeRows(x, offsetRows, tokens, heads, half, table.cos.subarray(...rows), table.sin.subarray(...rows), direction)) return;
  ropeRotateJs(x, offsetRows, tokens, heads, startPos, table, direction);
}

/** ropeRotate's loop: the fallback, and the tests' reference for the SIMD kernel. */
export function ropeRotateJs(x: Float32Array, offsetRows: number, tokens: number, heads: number, startPos: number, table: RopeTable, direction: 1 | -1): void {
  table.ensure(startPos + tokens);
  const d = table.headDim, half = table.half;
  for (let t = 0; t < tokens; t++) {
    const c0 = (startPos + t) * half;
    for (let h = 0; h < heads; h++) {
      const o = ((offsetRows + t) * heads + h) * d;
      for (let i = 0; i < half; i++) {
        const c = table.cos[c0 + i]!, s = direction * table.sin[c0 + i]!;
        const a = x[o + i]!, b = x[o + i + half]!;
        x[o + i] = a * c - b * s;
        x[o + i + half] = b * c + a * s;
      }
    }
  }
}

/** x [tokens, heads, headDim] at consecutive positions startPos, startPos+1, … (in place). */
export function ropeForward(x: Float32Array, offsetRows: number, tokens: number, heads: number, startPos: number, table: RopeTable): void {
  ropeRotate(x, offsetRows, tokens, heads, startPos, table, 1);
}

/** The transpose of ropeForward (a rotation by −θ), in place on the gradient. */
export function ropeBackward(dx: Float32Array, offsetRows: number, tokens: number, heads: number, startPos: number, table: RopeTable): void {
  ropeRotate(dx, offsetRows, tokens, heads, startPos, table, -1);
}
