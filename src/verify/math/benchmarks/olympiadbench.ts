// OlympiadBench (He et al. 2024) as its authors score it: OpenBMB/OlympiadBench,
// inference/judge.py with inference/code/math_judger.py `MathJudger.judge` (the same judge as
// eval/auto_scoring_judge.py, whose eval/scoring_examples.json are its test cases).
//
// Extraction (judge.py): the text after the last "So the final answer is" on its line (the answer
// sentence the prompt asks for), else the whole response; then, on both sides, the contents of
// every \boxed{...} joined with commas (unbalanced braces: wrong), else the $...$ segments of the
// last line, else the text; "x \in S" -> S; \left, \right, "$" and "%" removed, \approx, \simeq and
// \sim -> "=", primes -> "'", "^\circ" removed; leading and trailing punctuation stripped;
// \mathrm{~x} / \mathbf{x} -> x. A unit written after the box, as the prompt asks, is not read.
// Equivalence: the two sides split at top-level commas, each "\pm" item doubled into its "+" and
// "-" items; equal counts, and every reference item must pair with a different answer item,
// in any order, where two items are equal when
//   - they are the same text; or
//   - both are intervals: the same brackets, and each "\cup" part's ends equal as expressions
//     (a tuple "(a,b)" is an interval here, so tuples are ordered); or
//   - both are numbers within the tolerance, also after scaling the first by 1/100 or 100; or
//   - (not both equations) the parts after "=" are equal expressions: constants within the
//     tolerance, expressions with symbols whose difference simplifies to a constant below 1e-3
//     ("0.64N" = "\frac{16}{25}N", commuted products under a root, (n-1)! n / (k!(n-k)!) =
//     n!/(k!(n-k)!)); a symbol on one side only is unequal; or
//   - both are equations whose (lhs − rhs) differ by a non-zero integer factor (x^2+y^2=1 and
//     1-x^2-y^2=0).
// The tolerance is absolute: the problem's `error` (one number, or one per answer), else 1e-8;
// judge.py uses the default for Tuple problems. judge.py passes the model's answer first and the
// reference second, so the percent scaling and a list of tolerances apply to the model's items;
// `equal` does the same.
// sympy is replaced by sympy-latex.ts (parse_latex emulation and numeric simplification).
import { Session, constantValue, differenceIsSmallConstant, ratioIsNonzeroInteger } from './sympy-latex.ts';
import type { BenchmarkProblemInfo, BenchmarkScorer } from './types.ts';

const DEFAULT_PRECISION = 1e-8;

const SPECIAL_SIGNALS: Array<[string, string]> = [
  ['\\left', ''],
  ['\\right', ''],
  ['∶', ':'],
  ['，', ','],
  ['$', ''],
  ['\\approx', '='],
  ['\\simeq', '='],
  ['\\sim', '='],
  ['^\\prime', "'"],
  ['^{\\prime}', "'"],
  ['^\\circ', ''],
  ['%', ''],
];
const STRIP_CHARS = new Set('\n$,.:;^_=+`!@#$%^&*~，。');

class Raise extends Error {}

/** Python's str.strip(chars). */
function stripChars(s: string, chars: Set<string>): string {
  const a = [...s];
  let i = 0;
  let j = a.length;
  while (i < j && chars.has(a[i]!)) i++;
  while (j > i && chars.has(a[j - 1]!)) j--;
  return a.slice(i, j).join('');
}

/** The judge's extract_boxed_content. Throws Raise on an unclosed box. */
function extractBoxedContent(latex: string): string {
  let results = '';
  const re = /\\boxed\{/g;
  for (let m = re.exec(latex); m; m = re.exec(latex)) {
    const start = m.index + m[0].length;
    let end = start;
    let stack = 1;
    while (stack > 0 && end < latex.length) {
      if (latex[end] === '{') stack++;
      else if (latex[end] === '}') stack--;
      end++;
    }
    if (stack !== 0) throw new Raise('Mismatched braces in LaTeX string.');
    results += `${latex.slice(start, end - 1)},`;
  }
  if (results === '') {
    const lines = latex.trim().split('\n');
    const lastLine = lines[lines.length - 1]!;
    const answers = [...lastLine.matchAll(/\$(.*?)\$/g)].map((x) => x[1]!);
    results = answers.length > 0 ? answers.map((a) => `${a},`).join('') : latex;
  }
  return results;
}

function specialSymbolReplace(input: string): string {
  let e = input;
  if (e.includes('\\in ')) e = e.split('\\in ')[1]!;
  for (const [from, to] of SPECIAL_SIGNALS) e = e.replaceAll(from, to);
  e = stripChars(e, STRIP_CHARS);
  return e.replace(/\\(?:mathrm|mathbf)\{~?([^}]*)\}/g, '$1');
}

function splitByComma(expr: string): string[] {
  let depth = 0;
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(expr.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (start < expr.length) out.push(expr.slice(start).trim());
  return out;
}

function transPlusMinus(items: string[]): string[] {
  return items.flatMap((e) => (e.includes('\\pm') ? [e.replaceAll('\\pm', '+'), e.replaceAll('\\pm', '-')] : [e]));
}

function isInterval(e: string): boolean {
  return (e.startsWith('(') || e.startsWith('[')) && (e.endsWith(')') || e.endsWith(']'));
}

/** Python's float(); null when it raises. */
function pyFloat(s: string): number | null {
  const t = s.trim();
  if (/^[+-]?(?:inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  return /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(t) ? Number(t.replaceAll('_', '')) : null;
}

class Judge {
  private precision = DEFAULT_PRECISION;
  private readonly session = new Session();

  private numericalEqual(e1: string, e2: string): boolean {
    const reference = pyFloat(e1);
    const prediction = pyFloat(e2);
    if (reference === null || prediction === null) throw new Raise('float()');
    return [reference / 100, reference, reference * 100].some((item) => Math.abs(item - prediction) <= this.precision * 1.01);
  }

  /** expression_equal; throws Raise where sympy's parser raises. */
  private expressionEqual(exp1: string, exp2: string): boolean {
    const rhs = (e: string): string => (e.includes('=') ? e.split('=')[1]! : e).trim();
    const t1 = rhs(exp1);
    const t2 = rhs(exp2);
    const a = this.session.parse(t1);
    const b = this.session.parse(t2);
    if (!a || !b) throw new Raise('parse_latex');
    // sympy's structural equality of the parsed expressions.
    if (t1.replace(/\s/g, '') === t2.replace(/\s/g, '') || JSON.stringify(a.json) === JSON.stringify(b.json)) return true;
    const aSymbolic = a.variables.length > 0;
    const bSymbolic = b.variables.length > 0;
    if (aSymbolic !== bSymbolic) return false;
    if (!aSymbolic) {
      const d = Math.abs(constantValue(a) - constantValue(b));
      return d <= this.precision * 1.01;
    }
    return differenceIsSmallConstant(a, b, 1e-3);
  }

  /** equation_equal: (lhs − rhs) of one is a non-zero integer multiple of the other's. */
  private equationEqual(e1: string, e2: string): boolean {
    const sides = (e: string): [string, string] => {
      const parts = e.split('=');
      if (parts.length !== 2) throw new Raise('not one "="');
      return [parts[0]!, parts[1]!];
    };
    const [l1, r1] = sides(e1);
    const [l2, r2] = sides(e2);
    // The same left side (f(x) = ..., \Phi(x,y) = ...): the ratio is 1 exactly when the right sides are equal.
    if (l1.replace(/\s/g, '') === l2.replace(/\s/g, '')) {
      const a = this.session.parse(r1);
      const b = this.session.parse(r2);
      if (!a || !b) throw new Raise('parse_latex');
      if (a.variables.length === 0 && b.variables.length === 0) return constantValue(a) === constantValue(b) || Math.abs(constantValue(a) - constantValue(b)) <= 1e-12 * Math.max(1, Math.abs(constantValue(a)));
      return differenceIsSmallConstant(a, b, 1e-9);
    }
    const f = this.session.parse(`(${l1})-(${r1})`);
    const g = this.session.parse(`(${l2})-(${r2})`);
    if (!f || !g) throw new Raise('parse_latex');
    return ratioIsNonzeroInteger(f, g);
  }

  private intervalEqual(e1: string, e2: string): boolean {
    if (e1 === e2) return true;
    const parts1 = e1.split('\\cup');
    const parts2 = e2.split('\\cup');
    if (parts1.length !== parts2.length) return false;
    const brackets = new Set('[]()');
    return parts1.every((p1, i) => {
      const p2 = parts2[i]!;
      if (p1[0] !== p2[0] || p1.at(-1) !== p2.at(-1)) return false;
      const items1 = stripChars(p1, brackets).split(',');
      const items2 = stripChars(p2, brackets).split(',');
      // zip(): the shorter list decides how many ends are compared.
      const n = Math.min(items1.length, items2.length);
      for (let k = 0; k < n; k++) if (!this.expressionEqual(items1[k]!, items2[k]!)) return false;
      return true;
    });
  }

  isEqual(e1: string, e2: string, precision: number): boolean {
    this.precision = precision;
    if (e1 === e2 && e1 !== '') return true;
    if (isInterval(e1) && isInterval(e2)) {
      try {
        if (this.intervalEqual(e1, e2)) return true;
      } catch {
        return false;
      }
    }
    const attempt = (f: () => boolean): boolean => {
      try {
        return f();
      } catch {
        return false;
      }
    };
    if (attempt(() => this.numericalEqual(e1, e2))) return true;
    if (attempt(() => this.expressionEqual(e1, e2)) && !(e1.includes('=') && e2.includes('='))) return true;
    return attempt(() => this.equationEqual(e1, e2));
  }
}

/**
 * MathJudger.judge(expression1, expression2, precision): expression1 is the judge's "ground truth"
 * slot (the scoring examples put the reference there; judge.py puts the model's answer there).
 */
export function olympiadJudge(expression1: string, expression2: string, precision: number | number[] = DEFAULT_PRECISION): boolean {
  let e1: string;
  let e2: string;
  try {
    e1 = specialSymbolReplace(extractBoxedContent(expression1));
    e2 = specialSymbolReplace(extractBoxedContent(expression2));
  } catch {
    return false;
  }
  if (e1 === e2) return true;
  e1 = e1.replace(/[\u4e00-\u9fff]+/g, '');
  e2 = e2.replace(/[\u4e00-\u9fff]+/g, '');
  const list1 = transPlusMinus(splitByComma(e1));
  const list2 = transPlusMinus(splitByComma(e2));
  let precisions = Array.isArray(precision) ? [...precision] : [precision];
  if (precisions.length <= 1) precisions = list1.map(() => precisions[0]!).filter((p) => p !== undefined);
  if (list1.length !== list2.length) return false;
  const judge = new Judge();
  let idx = -1;
  while (list1.length > 0) {
    idx = (idx + 1) % list1.length;
    const item1 = list1[idx]!;
    const p = precisions[idx];
    // An index past the tolerance list raises in the Python judge.
    if (p === undefined) return false;
    const j = list2.findIndex((item2) => judge.isEqual(item1, item2, p));
    if (j < 0) return false;
    list1.splice(list1.indexOf(item1), 1);
    list2.splice(j, 1);
    precisions.splice(precisions.indexOf(p), 1);
  }
  return true;
}

/** judge.py's tolerance for a problem: none for Tuple problems; its `error` field, one number or one per answer. */
export function olympiadPrecision(problem: BenchmarkProblemInfo | undefined): number | number[] {
  const error = problem?.error;
  if (problem?.answerType?.includes('Tuple') || error === undefined || error === null || error === '') return DEFAULT_PRECISION;
  if (typeof error === 'number') return error;
  if (error.includes(',')) return error.split(',').map((p) => (p.trim() === '' ? DEFAULT_PRECISION : Number(p)));
  const v = Number(error);
  return Number.isFinite(v) ? v : DEFAULT_PRECISION;
}

/** judge.py's extract_answer for English problems: the rest of the line after the last "So the final answer is", else the whole output. */
function extractFinalAnswerSentence(response: string): string {
  const matches = [...response.matchAll(/So the final answer is (.*)/g)];
  return matches.length > 0 ? matches[matches.length - 1]![1]!.trim() : response;
}

export const olympiadbenchScorer: BenchmarkScorer = {
  name: 'olympiadbench',
  describe: 'OpenBMB/OlympiadBench MathJudger: unordered answers, per-problem tolerance, sympy',
  reference: (gold) => gold,
  extract: (response) => extractFinalAnswerSentence(response),
  equal: (reference, answer, problem) => {
    try {
      return olympiadJudge(answer, reference, olympiadPrecision(problem));
    } catch {
      return false;
    }
  },
};
