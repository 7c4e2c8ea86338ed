// e^x in plain JavaScript arithmetic, for the element-wise hot loops (softmax, log-softmax, SwiGLU's
// sigmoid). V8's Math.exp is an out-of-line call (about 10-14 ns here); this inlines into the
// caller's loop and costs about 4-5 ns, with a maximum relative error of about 4e-16 against
// Math.exp (tested in test/engine/kernels.test.ts), so results are those of Math.exp to float64
// rounding.
//
// Method (Tang's table-driven exp): x = (32m + j)·ln2/32 + r with |r| ≤ ln2/64, then
//   e^x = 2^m · 2^(j/32) · e^r,  e^r from its Taylor polynomial of degree 6 (truncation < 3e-17).
// ln2/32 is split into a high and a low part so the reduction r is exact to float64.

/** 1.5·2^52: adding and subtracting it rounds a float64 of magnitude < 2^51 to the nearest integer. */
const ROUND_SHIFT = 6755399441055744;
const INV_LN2_32 = 32 / Math.LN2;
const LN2_32_HI = 6.93147180369123816490e-01 / 32;
const LN2_32_LO = 1.90821492927058770002e-10 / 32;
/** 2^(j/32), j = 0 … 31. */
const POW2_FRAC = new Float64Array(32).map((_, j) => Math.pow(2, j / 32));
/** 2^e for e = −1100 … 1099 (index e + 1100); the small end underflows to subnormals and 0 like Math.exp. */
const POW2_EXP_BIAS = 1100;
const POW2_INT = new Float64Array(2200).map((_, i) => Math.pow(2, i - POW2_EXP_BIAS));

/** e^x; same special cases as Math.exp (NaN → NaN, −∞ → 0, +∞ → ∞, overflow → ∞, underflow → 0). */
export function fastExp(x: number): number {
  if (!(x > -740 && x < 709)) return Math.exp(x); // NaN, ±∞, overflow, deep underflow: rare, exact
  const kf = x * INV_LN2_32 + ROUND_SHIFT - ROUND_SHIFT;
  const r = x - kf * LN2_32_HI - kf * LN2_32_LO;
  const k = kf | 0;
  const er = 1 + r * (1 + r * (0.5 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720))))));
  return er * POW2_FRAC[k & 31]! * POW2_INT[(k >> 5) + POW2_EXP_BIAS]!;
}
