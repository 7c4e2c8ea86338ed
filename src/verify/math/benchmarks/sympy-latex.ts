// sympy's parse_latex, as OlympiadBench's judge uses it, emulated on marft's LaTeX evaluator
// (expression.ts, @cortex-js/compute-engine). sympy reads every letter, Greek letter and
// subscripted name as a symbol of its own ("q_{0}", "a_n" = "a_{n}", "\omega_{L}'", "k_{B}", "N"),
// \binom as a binomial coefficient, and juxtaposition as multiplication. The compute engine reads
// subscripts as indexing and some capitals as functions (N, D), so before parsing each such name is
// renamed to a plain symbol, consistently across the two sides of one comparison (a Session).
// sympy's exact simplification is replaced by evaluation: constants by value, expressions with
// symbols at seeded points (integer points when a factorial is involved: (n-1)! n = n!).
import { evaluate, parseExpression, type ParsedExpression } from '../expression.ts';
import { mulberry32 } from '../../../core/rng.ts';

const GREEK = new Set([
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'varepsilon', 'zeta', 'eta', 'theta', 'vartheta', 'iota', 'kappa', 'lambda', 'mu', 'nu', 'xi', 'rho', 'varrho',
  'sigma', 'varsigma', 'tau', 'upsilon', 'phi', 'varphi', 'chi', 'psi', 'omega', 'Gamma', 'Delta', 'Theta', 'Lambda', 'Xi', 'Sigma', 'Upsilon', 'Phi', 'Psi', 'Omega',
  'hbar', 'ell',
]);
/** Commands whose braced argument is text, copied as it is. */
const VERBATIM = new Set(['text', 'operatorname', 'begin', 'end', 'mathrm', 'mathbf', 'textbf', 'mbox']);

/** One comparison: the symbol names both sides share. */
export class Session {
  private readonly names = new Map<string, string>();

  private nameFor(key: string): string {
    let n = this.names.get(key);
    if (n === undefined) {
      n = `s${this.names.size}`;
      this.names.set(key, n);
    }
    return n;
  }

  /** The text with every symbol renamed and \binom written with factorials. */
  rename(latex: string): string {
    const s = latex;
    let out = '';
    let i = 0;
    const group = (at: number): number => {
      // The index just past the brace group opening at `at`; -1 when unclosed.
      let depth = 0;
      for (let j = at; j < s.length; j++) {
        if (s[j] === '\\') j++;
        else if (s[j] === '{') depth++;
        else if (s[j] === '}' && --depth === 0) return j + 1;
      }
      return -1;
    };
    /** One sub- or superscript argument starting at `at` (after spaces): [text, end]. */
    const scriptArg = (at: number): [string, number] | null => {
      let j = at;
      while (s[j] === ' ') j++;
      if (s[j] === '{') {
        const end = group(j);
        return end < 0 ? null : [s.slice(j + 1, end - 1), end];
      }
      if (s[j] === '\\') {
        const m = /^\\[a-zA-Z]+/.exec(s.slice(j));
        return m ? [m[0], j + m[0].length] : null;
      }
      return j < s.length ? [s[j]!, j + 1] : null;
    };
    const symbol = (base: string, from: number): number => {
      let j = from;
      let sub = '';
      let sup = '';
      let k = j;
      while (s[k] === ' ') k++;
      if (s[k] === '^' && s[k + 1] !== '\\') {
        // "v^2_0": the subscript written after the power still names the symbol.
        const p = scriptArg(k + 1);
        if (p) {
          let q = p[1];
          while (s[q] === ' ') q++;
          if (s[q] === '_') {
            const b = scriptArg(q + 1);
            if (b) {
              sub = b[0];
              sup = p[0];
              j = b[1];
            }
          }
        }
      } else if (s[k] === '_') {
        const b = scriptArg(k + 1);
        if (b) {
          sub = b[0];
          j = b[1];
        }
      }
      let primes = '';
      while (s[j] === "'") {
        primes += "'";
        j++;
      }
      const key = `${base}_${sub.replace(/[\s{}]/g, '')}${primes}`;
      out += ` \\mathrm{${this.nameFor(key)}}`;
      if (sup !== '') out += `^{${sup}}`;
      return j;
    };
    while (i < s.length) {
      const c = s[i]!;
      if (c === '\\') {
        const m = /^\\([a-zA-Z]+)/.exec(s.slice(i));
        if (!m) {
          out += s.slice(i, i + 2);
          i += 2;
          continue;
        }
        const name = m[1]!;
        const after = i + m[0].length;
        if (GREEK.has(name)) {
          i = symbol(name, after);
          continue;
        }
        if (name === 'binom') {
          const a = scriptArg(after);
          const b = a ? scriptArg(a[1]) : null;
          if (a && b) {
            const n = this.rename(a[0]);
            const k = this.rename(b[0]);
            out += `\\frac{(${n})!}{(${k})!((${n})-(${k}))!}`;
            i = b[1];
            continue;
          }
        }
        if (VERBATIM.has(name)) {
          let j = after;
          while (s[j] === ' ') j++;
          const end = s[j] === '{' ? group(j) : -1;
          if (end > 0) {
            out += s.slice(i, end);
            i = end;
            continue;
          }
        }
        out += m[0];
        i = after;
        continue;
      }
      if (/[a-zA-Z]/.test(c) && c !== 'e') {
        i = symbol(c, i + 1);
        continue;
      }
      out += c;
      i++;
    }
    return out;
  }

  /** parse_latex: null where sympy's parser would raise (here: where the evaluator cannot read the expression). */
  parse(latex: string): ParsedExpression | null {
    if (latex.trim() === '') return null;
    return parseExpression(this.rename(latex));
  }
}

function mentions(node: unknown, head: string): boolean {
  return Array.isArray(node) && (node[0] === head || node.some((n) => mentions(n, head)));
}

function valueAt(e: ParsedExpression, env: Record<string, number>): number {
  try {
    return evaluate(e.json, env);
  } catch {
    return NaN;
  }
}

/** A constant expression's value (NaN when undefined or too large to compute, as sympy's can_compute_power refuses 10^(10^10)). */
export function constantValue(e: ParsedExpression): number {
  return valueAt(e, {});
}

/** Values of a and b at shared seeded points where both are finite: [a, b] pairs. */
export function samplePairs(a: ParsedExpression, b: ParsedExpression, points = 16): Array<[number, number]> {
  const variables = [...new Set([...a.variables, ...b.variables])];
  const integers = mentions(a.json, 'Factorial') || mentions(b.json, 'Factorial');
  const rand = mulberry32(0x0b5e7);
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < points * (integers ? 3 : 1); k++) {
    const env = Object.fromEntries(
      variables.map((v) => [v, integers ? 1 + Math.floor(rand() * 12) : k % 3 === 0 ? 0.3 + 2 * rand() : k % 3 === 1 ? 2 + 18 * rand() : -0.3 - 2 * rand()]),
    );
    const x = valueAt(a, env);
    const y = valueAt(b, env);
    if (Number.isFinite(x) && Number.isFinite(y)) pairs.push([x, y]);
  }
  return pairs;
}

/** simplify(a − b) is a constant c with |c| < tolerance: a − b takes one value (to rounding) at every sampled point, of size below tolerance. */
export function differenceIsSmallConstant(a: ParsedExpression, b: ParsedExpression, tolerance: number): boolean {
  const pairs = samplePairs(a, b);
  if (pairs.length < 3) return false;
  const diffs = pairs.map(([x, y]) => x - y);
  const scale = (i: number): number => Math.max(1, Math.abs(pairs[i]![0]), Math.abs(pairs[i]![1]));
  return diffs.every((d, i) => Math.abs(d - diffs[0]!) <= 1e-9 * Math.max(scale(i), scale(0))) && Math.abs(diffs[0]!) < tolerance;
}

/** simplify(f / g) or simplify(g / f) is a non-zero integer: the ratio is one constant at every sampled point and that constant (or its inverse) is an integer. */
export function ratioIsNonzeroInteger(f: ParsedExpression, g: ParsedExpression): boolean {
  const pairs = samplePairs(f, g).filter(([x, y]) => Math.abs(x) > 1e-12 && Math.abs(y) > 1e-12);
  if (pairs.length < 3) return false;
  const ratios = pairs.map(([x, y]) => x / y);
  const r = ratios[0]!;
  if (!ratios.every((q) => Math.abs(q - r) <= 1e-9 * Math.max(1, Math.abs(r)))) return false;
  const isInt = (x: number): boolean => Math.abs(x - Math.round(x)) <= 1e-9 * Math.max(1, Math.abs(x)) && Math.round(x) !== 0;
  return isInt(r) || isInt(1 / r);
}
