// Complex arithmetic for the answer evaluator: MATH answers such as "6 - 5i" or "(1+i)^2" are
// complex numbers. Real inputs stay real (im = 0) through every operation used on them.

export interface Complex {
  re: number;
  im: number;
}

export const c = (re: number, im = 0): Complex => ({ re, im });
export const isReal = (z: Complex): boolean => z.im === 0;
export const abs = (z: Complex): number => Math.hypot(z.re, z.im);
export const add = (a: Complex, b: Complex): Complex => c(a.re + b.re, a.im + b.im);
export const sub = (a: Complex, b: Complex): Complex => c(a.re - b.re, a.im - b.im);
export const neg = (a: Complex): Complex => c(-a.re, -a.im);

export function mul(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return c(a.re * b.re);
  return c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

export function div(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return c(a.re / b.re);
  const d = b.re * b.re + b.im * b.im;
  return c((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}

function polar(r: number, theta: number): Complex {
  return c(r * Math.cos(theta), r * Math.sin(theta));
}

/** Principal value of a^b; integer powers by repeated squaring so that i^2 is exactly -1. */
export function pow(a: Complex, b: Complex): Complex {
  if (isReal(a) && isReal(b)) return c(Math.pow(a.re, b.re));
  if (isReal(b) && Number.isInteger(b.re) && Math.abs(b.re) <= 64) {
    let result = c(1);
    let base = b.re < 0 ? div(c(1), a) : a;
    for (let n = Math.abs(b.re); n > 0; n >>= 1) {
      if (n & 1) result = mul(result, base);
      base = mul(base, base);
    }
    return result;
  }
  if (a.re === 0 && a.im === 0) return c(0);
  const logR = Math.log(abs(a));
  const theta = Math.atan2(a.im, a.re);
  // exp(b · log a)
  const re = b.re * logR - b.im * theta;
  const im = b.im * logR + b.re * theta;
  return polar(Math.exp(re), im);
}

/** Principal square root; sqrt of a negative real is imaginary. */
export function sqrt(a: Complex): Complex {
  if (isReal(a) && a.re >= 0) return c(Math.sqrt(a.re));
  const r = abs(a);
  const re = Math.sqrt((r + a.re) / 2);
  const im = Math.sign(a.im || 1) * Math.sqrt((r - a.re) / 2);
  return c(re, im);
}

export function exp(a: Complex): Complex {
  return isReal(a) ? c(Math.exp(a.re)) : polar(Math.exp(a.re), a.im);
}

/** Applies a real function; NaN for a non-real argument (trigonometry of complex values is not needed for answers). */
export function real(f: (x: number) => number, a: Complex): Complex {
  return isReal(a) ? c(f(a.re)) : c(NaN);
}
