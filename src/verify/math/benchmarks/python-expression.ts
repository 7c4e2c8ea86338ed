// The plain-text expressions PRM800K's grader hands to sympy (openai/prm800k grading/grader.py,
// `_sympy_parse`: "^" -> "**", then sympy's parse_expr with the standard transformations plus
// implicit multiplication and application), read with the same rules and evaluated numerically:
//   Python precedence (** binds tighter than a unary minus and is right-associative; * and / left
//   to right), "n!" is a factorial, juxtaposition multiplies ("2x", "3sqrt(2)", ")("), a name of
//   several letters that sympy does not know is split into one symbol per letter ("xy" -> x*y,
//   "inf" -> i*n*f), sqrt/sin/cos/tan/log/ln/exp/abs are functions and pi is π. Tuples ("(1,2)"),
//   comparisons, "=" and any other Python syntax make the expression unusable, as they make
//   sympy's parse or its subtraction raise in the grader.
// sympy.simplify(a - b) == 0 is then decided numerically (prm800k.ts): a and b evaluated at shared
// seeded points, or as constants.
import { mulberry32 } from '../../../core/rng.ts';

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'symbol'; name: string }
  | { kind: 'unary'; op: '-' | '+'; arg: Node }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '**'; left: Node; right: Node }
  | { kind: 'call'; fn: string; arg: Node }
  | { kind: 'factorial'; arg: Node };

const FUNCTIONS: Record<string, (x: number) => number> = {
  sqrt: Math.sqrt,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  log: Math.log,
  ln: Math.log,
  exp: Math.exp,
  abs: Math.abs,
  floor: Math.floor,
  ceiling: Math.ceil,
  factorial: factorial,
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, oo: Infinity };
// Names sympy leaves whole: its Greek letter names.
const GREEK_NAMES = new Set(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lamda', 'lambda', 'mu', 'nu', 'xi', 'omicron', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'chi', 'psi', 'omega']);

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) return NaN;
  let r = 1;
  for (let i = 2; i <= n; i++) r *= i;
  return r;
}

type Token = { t: 'num'; v: number } | { t: 'name'; v: string } | { t: 'op'; v: string };

const NAME_START = /[\p{L}_]/u;
const NAME_CHAR = /[\p{L}\p{N}_]/u;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (num) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < text.length && NAME_CHAR.test(text[j]!)) j++;
      out.push({ t: 'name', v: text.slice(i, j) });
      i = j;
      continue;
    }
    if (text.startsWith('**', i)) {
      out.push({ t: 'op', v: '**' });
      i += 2;
      continue;
    }
    if ('+-*/()!,'.includes(c)) {
      out.push({ t: 'op', v: c });
      i++;
      continue;
    }
    throw new Error(`unsupported character ${JSON.stringify(c)}`);
  }
  return splitNames(out);
}

/** sympy's split_symbols: an unknown name of several letters is a product of one-letter symbols. */
function splitNames(tokens: Token[]): Token[] {
  const out: Token[] = [];
  for (const tok of tokens) {
    if (tok.t !== 'name' || tok.v.length === 1 || tok.v in FUNCTIONS || tok.v in CONSTANTS || GREEK_NAMES.has(tok.v) || tok.v.includes('_')) {
      out.push(tok);
      continue;
    }
    for (const ch of tok.v) out.push(/\d/.test(ch) ? { t: 'num', v: Number(ch) } : { t: 'name', v: ch });
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private isOp(v: string): boolean {
    const t = this.peek();
    return t !== undefined && t.t === 'op' && t.v === v;
  }

  parse(): Node {
    const n = this.sum();
    if (this.i !== this.tokens.length) throw new Error('trailing input');
    return n;
  }

  private sum(): Node {
    let left = this.product();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.i++] as { v: '+' | '-' }).v;
      left = { kind: 'binary', op, left, right: this.product() };
    }
    return left;
  }

  /** Products, quotients and juxtaposition (implicit multiplication), left to right. */
  private product(): Node {
    let left = this.unary();
    for (;;) {
      if (this.isOp('*') || this.isOp('/')) {
        const op = (this.tokens[this.i++] as { v: '*' | '/' }).v;
        left = { kind: 'binary', op, left, right: this.unary() };
      } else if (this.startsOperand()) {
        left = { kind: 'binary', op: '*', left, right: this.power() };
      } else return left;
    }
  }

  private startsOperand(): boolean {
    const t = this.peek();
    return t !== undefined && (t.t === 'num' || t.t === 'name' || (t.t === 'op' && t.v === '('));
  }

  private unary(): Node {
    if (this.isOp('-') || this.isOp('+')) {
      const op = (this.tokens[this.i++] as { v: '-' | '+' }).v;
      return { kind: 'unary', op, arg: this.unary() };
    }
    return this.power();
  }

  /** Python's power: binds tighter than a unary minus on its left, right-associative, and takes a unary on its right. */
  private power(): Node {
    const base = this.postfix();
    if (this.isOp('**')) {
      this.i++;
      return { kind: 'binary', op: '**', left: base, right: this.unary() };
    }
    return base;
  }

  private postfix(): Node {
    let n = this.atom();
    while (this.isOp('!')) {
      this.i++;
      n = { kind: 'factorial', arg: n };
    }
    return n;
  }

  private atom(): Node {
    const t = this.tokens[this.i++];
    if (t === undefined) throw new Error('unexpected end');
    if (t.t === 'num') return { kind: 'number', value: t.v };
    if (t.t === 'name') {
      if (t.v in FUNCTIONS && this.isOp('(')) {
        this.i++;
        const arg = this.sum();
        if (!this.isOp(')')) throw new Error('a function of several arguments');
        this.i++;
        return { kind: 'call', fn: t.v, arg };
      }
      // An unknown name followed by "(" is an undefined function to sympy: nothing to evaluate.
      if (this.isOp('(') && !(t.v in CONSTANTS) && !(t.v in FUNCTIONS)) throw new Error(`undefined function ${t.v}`);
      return { kind: 'symbol', name: t.v };
    }
    if (t.v === '(') {
      const inner = this.sum();
      // "(1,2)" is a tuple, which the grader's subtraction cannot handle.
      if (!this.isOp(')')) throw new Error('a tuple or an unclosed parenthesis');
      this.i++;
      return inner;
    }
    throw new Error(`unexpected ${t.v}`);
  }
}

/** A parsed grader expression: its free symbols and a way to evaluate it. */
export interface PyExpression {
  symbols: string[];
  evaluate(env: Record<string, number>): number;
}

function collect(n: Node, out: Set<string>): void {
  if (n.kind === 'symbol') {
    if (!(n.name in CONSTANTS)) out.add(n.name);
  } else if (n.kind === 'unary' || n.kind === 'call' || n.kind === 'factorial') collect(n.arg, out);
  else if (n.kind === 'binary') {
    collect(n.left, out);
    collect(n.right, out);
  }
}

function evaluateNode(n: Node, env: Record<string, number>): number {
  switch (n.kind) {
    case 'number':
      return n.value;
    case 'symbol':
      return n.name in CONSTANTS ? CONSTANTS[n.name]! : env[n.name]!;
    case 'unary':
      return n.op === '-' ? -evaluateNode(n.arg, env) : evaluateNode(n.arg, env);
    case 'call':
      return FUNCTIONS[n.fn]!(evaluateNode(n.arg, env));
    case 'factorial':
      return factorial(evaluateNode(n.arg, env));
    case 'binary': {
      const a = evaluateNode(n.left, env);
      const b = evaluateNode(n.right, env);
      if (n.op === '+') return a + b;
      if (n.op === '-') return a - b;
      if (n.op === '*') return a * b;
      if (n.op === '/') return a / b;
      return Math.pow(a, b);
    }
  }
}

/** Parses the grader's text; null where sympy's parse (or the grader's later arithmetic) would raise. */
export function parsePyExpression(text: string): PyExpression | null {
  let node: Node;
  try {
    node = new Parser(tokenize(text.replaceAll('^', '**'))).parse();
  } catch {
    return null;
  }
  const symbols = new Set<string>();
  collect(node, symbols);
  return { symbols: [...symbols].sort(), evaluate: (env) => evaluateNode(node, env) };
}

/**
 * Whether a − b simplifies to 0, decided numerically: constants agree to floating-point noise
 * (relative 1e-13: sympy's arithmetic is exact, so 1/3 against 0.333333333333 is not 0); with
 * symbols, a and b agree (relative 1e-9) at every one of 12 seeded points where both are defined,
 * and at 3 such points at least.
 */
export function differenceIsZero(a: PyExpression, b: PyExpression): boolean {
  const symbols = [...new Set([...a.symbols, ...b.symbols])];
  const close = (x: number, y: number, tol: number): boolean => x === y || (Number.isFinite(x) && Number.isFinite(y) && Math.abs(x - y) <= tol * Math.max(1, Math.abs(x), Math.abs(y)));
  if (symbols.length === 0) {
    const x = a.evaluate({});
    const y = b.evaluate({});
    // oo - oo is nan to sympy, not 0.
    return Number.isFinite(x) && Number.isFinite(y) && close(x, y, 1e-13);
  }
  const rand = mulberry32(20230531);
  let defined = 0;
  for (let k = 0; k < 12; k++) {
    const env = Object.fromEntries(symbols.map((s) => [s, k % 3 === 0 ? 0.3 + 2 * rand() : k % 3 === 1 ? 2 + 18 * rand() : -0.3 - 2 * rand()]));
    const x = a.evaluate(env);
    const y = b.evaluate(env);
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    if (!close(x, y, 1e-9)) return false;
    defined++;
  }
  return defined >= 3;
}
