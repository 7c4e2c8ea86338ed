// One scalar answer expression: LaTeX → MathJSON (parsed by @cortex-js/compute-engine) → a numeric
// function of its free variables, evaluated by our own small interpreter.
//
// Why our own evaluator: the compute engine treats two unparsable inputs as equal and simplifies
// in ways we do not control; evaluating the MathJSON tree ourselves lets us refuse anything that
// contains a parse error or an operator we do not know (then the caller falls back to text).
import { ComputeEngine } from '@cortex-js/compute-engine';
import * as C from './complex.ts';
import type { Complex } from './complex.ts';

type MathJson = number | string | { num: string } | MathJson[] | { [k: string]: unknown };

let engine: ComputeEngine | null = null;
function computeEngine(): ComputeEngine {
  engine ??= new ComputeEngine();
  return engine;
}

/** A parsed expression: its MathJSON tree and the free variables it uses (sorted). */
export interface ParsedExpression {
  json: MathJson;
  variables: string[];
}

const CONSTANTS: Record<string, number> = { Pi: Math.PI, ExponentialE: Math.E, PositiveInfinity: Infinity, NegativeInfinity: -Infinity };

class Unsupported extends Error {}

/** Plain-text spellings that the LaTeX parser would read as products of letters. */
function latexify(s: string): string {
  return s
    .replace(/\\binom\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}/g, (_m, n: string, k: string) => String(binomial(Number(n), Number(k))))
    .replace(/(^|[^\\a-zA-Z])sqrt\s*\(/g, '$1\\sqrt(')
    .replace(/(^|[^\\a-zA-Z])pi(?![a-zA-Z])/g, '$1\\pi ')
    .replace(/(^|[^\\a-zA-Z])(sin|cos|tan|ln|log|exp)(?=\s*[({\d])/g, '$1\\$2')
    .replace(/\*\*/g, '^')
    .replace(/\*/g, '\\cdot ')
    .replace(/\\sqrt\(([^()]*)\)/g, '\\sqrt{$1}')
    .replace(/(^|[^\\a-zA-Z])inf(?:inity|ty)?(?![a-zA-Z])/g, '$1\\infty ');
}

function collectVariables(node: MathJson, out: Set<string>): void {
  if (typeof node === 'string') {
    if (!(node in CONSTANTS) && node !== 'ImaginaryUnit' && !node.startsWith("'")) out.add(node);
  } else if (Array.isArray(node)) {
    for (let i = 1; i < node.length; i++) collectVariables(node[i]!, out);
  }
}

function hasError(node: MathJson): boolean {
  if (Array.isArray(node)) return node[0] === 'Error' || node.some((n, i) => i > 0 && hasError(n));
  return false;
}

/** Longest scalar text given to the LaTeX parser: final answers are short, and the parser's time grows fast with length. */
export const MAX_EXPRESSION_CHARS = 300;

/**
 * Whether the compute engine may parse this text: short enough, brackets balanced, little nesting.
 * Unbalanced brackets make its parser backtrack exponentially (10 "(" before 50 letters take seconds).
 */
function parserCanTake(text: string): boolean {
  if (text.length > MAX_EXPRESSION_CHARS) return false;
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const stack: string[] = [];
  for (const ch of text) {
    if (ch === '(' || ch === '[' || ch === '{') {
      stack.push(ch);
      if (stack.length > 12) return false;
    } else if (ch in pairs) {
      if (stack.pop() !== pairs[ch]) return false;
    }
  }
  return stack.length === 0;
}

/** Parses one scalar LaTeX expression; null when it does not parse cleanly or is not a scalar formula. */
export function parseExpression(latex: string): ParsedExpression | null {
  const text = latexify(latex).trim();
  if (text === '' || !parserCanTake(text)) return null;
  let json: MathJson;
  try {
    const expr = computeEngine().parse(text);
    if (!expr.isValid) return null;
    json = expr.json as MathJson;
  } catch {
    return null;
  }
  if (hasError(json)) return null;
  const variables = new Set<string>();
  collectVariables(json, variables);
  try {
    // Validate the operators once, with every variable set to 1.5.
    evaluateComplex(json, Object.fromEntries([...variables].map((v) => [v, 1.5])));
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
  return { json, variables: [...variables].sort() };
}

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) return NaN;
  let r = 1;
  for (let i = 2; i <= n; i++) r *= i;
  return r;
}

function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(k) || k < 0 || n < 0 || k > n) return NaN;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/** Value of a MathJSON tree under a real variable assignment; NaN parts for undefined values; throws Unsupported. */
export function evaluateComplex(node: MathJson, env: Record<string, number>): Complex {
  if (typeof node === 'number') return C.c(node);
  if (typeof node === 'string') {
    if (node in CONSTANTS) return C.c(CONSTANTS[node]!);
    if (node === 'ImaginaryUnit') return C.c(0, 1);
    if (node in env) return C.c(env[node]!);
    throw new Unsupported(`symbol ${node}`);
  }
  if (!Array.isArray(node)) {
    if ('num' in node && typeof node.num === 'string') return C.c(Number(node.num.replace(/[()]/g, '').replace(/\.\.\.$/, '')));
    throw new Unsupported('object node');
  }
  const [head, ...args] = node as [string, ...MathJson[]];
  const v = (i: number): Complex => evaluateComplex(args[i]!, env);
  const all = (): Complex[] => args.map((a) => evaluateComplex(a, env));
  const realOf = (i: number): number => {
    const z = v(i);
    return C.isReal(z) ? z.re : NaN;
  };
  const r = (f: (x: number) => number, i = 0): Complex => C.real(f, v(i));
  switch (head) {
    case 'Complex':
      return C.c(realOf(0), realOf(1));
    case 'Add':
      return all().reduce(C.add, C.c(0));
    case 'Subtract':
      return args.length === 1 ? C.neg(v(0)) : C.sub(v(0), v(1));
    case 'Multiply':
      return all().reduce(C.mul, C.c(1));
    case 'Divide':
    case 'Rational':
      return C.div(v(0), v(1));
    case 'Negate':
      return C.neg(v(0));
    case 'Power': {
      const base = v(0);
      const exp = v(1);
      // Odd roots of negatives, e.g. (-8)^(1/3), are real.
      if (C.isReal(base) && C.isReal(exp) && base.re < 0 && !Number.isInteger(exp.re)) {
        const inv = 1 / exp.re;
        if (Math.abs(inv - Math.round(inv)) < 1e-12 && Math.round(inv) % 2 !== 0) return C.c(-Math.pow(-base.re, exp.re));
        return C.pow(base, exp);
      }
      return C.pow(base, exp);
    }
    case 'Square':
      return C.mul(v(0), v(0));
    case 'Sqrt':
      return C.sqrt(v(0));
    case 'Root': {
      const x = realOf(0);
      const n = realOf(1);
      return C.c(x < 0 && n % 2 === 1 ? -Math.pow(-x, 1 / n) : Math.pow(x, 1 / n));
    }
    case 'Exp':
      return C.exp(v(0));
    case 'Ln':
      return r(Math.log);
    case 'Log':
      return args.length === 2 ? C.c(Math.log(realOf(0)) / Math.log(realOf(1))) : r(Math.log10);
    case 'Lb':
      return r(Math.log2);
    case 'Lg':
      return r(Math.log10);
    case 'Sin':
      return r(Math.sin);
    case 'Cos':
      return r(Math.cos);
    case 'Tan':
      return r(Math.tan);
    case 'Cot':
      return r((x) => 1 / Math.tan(x));
    case 'Sec':
      return r((x) => 1 / Math.cos(x));
    case 'Csc':
      return r((x) => 1 / Math.sin(x));
    case 'Arcsin':
      return r(Math.asin);
    case 'Arccos':
      return r(Math.acos);
    case 'Arctan':
      return r(Math.atan);
    case 'Abs':
      return C.c(C.abs(v(0)));
    case 'Factorial':
      return r(factorial);
    case 'Degrees':
      return r((x) => (x * Math.PI) / 180);
    case 'Delimiter':
      if (args.length === 1) return v(0);
      throw new Unsupported('delimiter with several items');
    case 'Half':
      return C.div(v(0), C.c(2));
    case 'Floor':
      return r(Math.floor);
    case 'Ceil':
      return r(Math.ceil);
    case 'Max':
      return C.c(Math.max(...args.map((_a, i) => realOf(i))));
    case 'Min':
      return C.c(Math.min(...args.map((_a, i) => realOf(i))));
    default:
      throw new Unsupported(`operator ${head}`);
  }
}

/** Real value of a MathJSON tree (NaN when the value is not real); throws Unsupported. */
export function evaluate(node: MathJson, env: Record<string, number>): number {
  const z = evaluateComplex(node, env);
  return z.im === 0 || Math.abs(z.im) <= 1e-12 * Math.max(1, Math.abs(z.re)) ? z.re : NaN;
}

/** The finite value of a variable-free expression (LaTeX or plain), or null when it has none. */
export function constantValue(latex: string): number | null {
  const e = parseExpression(latex);
  if (!e || e.variables.length > 0) return null;
  try {
    const v = evaluate(e.json, {});
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}
