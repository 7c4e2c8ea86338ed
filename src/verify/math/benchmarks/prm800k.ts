// PRM800K's answer grader (Lightman et al. 2023, "Let's Verify Step by Step"): openai/prm800k,
// grading/grader.py `grade_answer(given_answer, ground_truth)` with grading/math_normalize.py.
// The MATH-500 split is PRM800K's test split, and this is the grader its authors published with
// it; DeepScaleR's reward (deepscaler.ts) grades with the same two functions (its
// grade_answer_mathd or grade_answer_sympy is this grade_answer).
//
// An answer is correct when
//  (a) the MATH normalisation (hendrycks-normalize.ts) makes both strings equal, or
//  (b) after the grader's own normalisation (below) the strings are equal, or, splitting an answer
//      written as a tuple or interval "(a, b]" into its items (no other bracket inside), every item
//      equals its counterpart, in order and with the same outer brackets, where
//        - two fractions "a/b" must be written identically (an unreduced 2/4 is not 1/2),
//        - an integer reference needs an integer answer (10/2 is not 5, 5.0 is),
//        - otherwise sympy must simplify reference − answer to 0; the grader refuses (says no)
//          when that difference has more than two distinct letters, "^{" or "^(", or an
//          exponent of two or more digits.
// Normalisation (b): unwrap a whole "\text{..}"; drop "$" and "%"; " or " / " and " -> ","; million,
// billion, trillion -> *10^6, ^9, ^12; delete the unit words degree, cm, centimeter, meter, mile,
// second, minute, hour, day, week, month, year, foot, feet, inch, yard (with es/s and a power)
// wherever they occur; drop "^\circ", one layer of outer braces and ",\!" separators; a number that
// is an integer is written as one; LaTeX becomes text as pylatexenc renders it (latex-to-text.ts:
// \frac{a}{b} -> a/b with no parentheses, \sqrt{x} -> sqrt(x), \pi -> pi, \infty -> inf);
// "7 3/4" -> "7+3/4"; spaces and braces dropped; lower case; "1,000" -> "1000".
// Unordered lists ("1, 2" against "2, 1") are one item each and compare as sympy tuples, which the
// grader's subtraction cannot handle: unequal, as "(1,2)" against "(2,1)".
// sympy's simplification is replaced by numeric evaluation (python-expression.ts).
import { lastBoxedContent, mathdNormalize } from './hendrycks-normalize.ts';
import { latexToText } from './latex-to-text.ts';
import { differenceIsZero, parsePyExpression } from './python-expression.ts';
import type { BenchmarkScorer } from './types.ts';

const UNITS = ['degree', 'cm', 'centimeter', 'meter', 'mile', 'second', 'minute', 'hour', 'day', 'week', 'month', 'year', 'foot', 'feet', 'inch', 'yard'];
const UNIT_RES = UNITS.map((u) => new RegExp(`${u}(es)?(s)? *(\\^[0-9]+)?`, 'g'));
const TUPLE_CHARS = '()[]';

/** Python's float(): surrounding whitespace, underscores between digits, exponents, inf and nan; null when it raises. */
export function pythonFloat(s: string): number | null {
  const t = s.trim();
  if (/^[+-]?(?:inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  const digits = String.raw`\d(?:_?\d)*`;
  const re = new RegExp(`^[+-]?(?:${digits}(?:\\.(?:${digits})?)?|\\.${digits})(?:[eE][+-]?${digits})?$`);
  return re.test(t) ? Number(t.replaceAll('_', '')) : null;
}

/** The grader's _is_int: within 1e-7 of an integer (inf and nan are not). */
function isIntValue(x: number): boolean {
  return Number.isFinite(x) && Math.abs(x - Math.round(x)) <= 1e-7;
}

/** "1,234,567" -> "1234567" where the commas separate groups of three digits (tuple commas stay). */
function stripProperlyFormattedCommas(expr: string): string {
  const re = /(\d)(,)(\d\d\d)($|\D)/g;
  for (;;) {
    const next = expr.replace(re, '$1$3$4');
    if (next === expr) return next;
    expr = next;
  }
}

function strIsInt(x: string): boolean {
  const v = pythonFloat(stripProperlyFormattedCommas(x));
  return v !== null && isIntValue(v);
}

/** str(int(float(x without commas))): truncation towards zero, exact for large values. */
function strToInt(x: string): string {
  const v = pythonFloat(x.replaceAll(',', ''))!;
  return BigInt(Math.trunc(v)).toString();
}

function isFrac(expr: string): boolean {
  return /^-?[0-9]+.?\/0*[1-9][0-9]*.?$/.test(expr);
}

/** The grader's _parse_latex: mixed numbers kept apart ("3\frac12" -> "3 1/2"), pylatexenc's text, then its Unicode signs spelt for sympy. */
function parseLatex(expr: string): string {
  let e = expr.replaceAll('\\tfrac', '\\frac').replaceAll('\\dfrac', '\\frac').replaceAll('\\frac', ' \\frac');
  e = latexToText(e);
  e = e.replaceAll('√', 'sqrt').replaceAll('π', 'pi').replaceAll('∞', 'inf').replaceAll('∪', 'U').replaceAll('·', '*').replaceAll('×', '*');
  return e.trim();
}

/** The grader's _normalize. */
export function prm800kNormalize(input: string): string {
  let expr = input;
  const m = /^\\text\{(.+?)\}$/.exec(expr);
  if (m) expr = m[1]!;
  expr = expr.replaceAll('\\%', '%').replaceAll('\\$', '$').replaceAll('$', '').replaceAll('%', '');
  expr = expr.replaceAll(' or ', ' , ').replaceAll(' and ', ' , ');
  expr = expr.replaceAll('million', '*10^6').replaceAll('billion', '*10^9').replaceAll('trillion', '*10^12');
  for (const re of UNIT_RES) expr = expr.replace(re, '');
  expr = expr.replace(/\^ *\\circ/g, '');
  if (expr.length > 0 && expr[0] === '{' && expr.at(-1) === '}') expr = expr.slice(1, -1);
  expr = expr.replace(/,\\! */g, '');
  const asFloat = pythonFloat(expr);
  if (asFloat !== null && isIntValue(asFloat)) expr = BigInt(Math.round(asFloat)).toString();
  if (expr.includes('\\')) {
    try {
      expr = parseLatex(expr);
    } catch {
      // pylatexenc raised: the grader keeps the LaTeX.
    }
  }
  expr = expr.replace(/- */g, '-');
  expr = expr.replace(/([0-9]) +([0-9])/g, '$1+$2');
  expr = expr.replaceAll(' ', '').replaceAll('{', '').replaceAll('}', '');
  expr = expr.toLowerCase();
  if (strIsInt(expr)) expr = strToInt(expr);
  return expr;
}

function countUnknownLetters(expr: string): number {
  const letters = new Set([...expr.replaceAll('sqrt', '').replaceAll('frac', '')].filter((c) => /\p{L}/u.test(c)));
  return letters.size;
}

/** The grader's should_allow_eval: sympy might hang on these, so they are never simplified. */
function shouldAllowEval(expr: string): boolean {
  if (countUnknownLetters(expr) > 2) return false;
  if (expr.includes('^{') || expr.includes('^(')) return false;
  return !/\^[0-9]+\^/.test(expr) && !/\^[0-9][0-9]+/.test(expr);
}

function equalUnderSympy(reference: string, given: string): boolean {
  if (!shouldAllowEval(`(${reference})-(${given})`)) return false;
  const a = parsePyExpression(reference);
  const b = parsePyExpression(given);
  return a !== null && b !== null && differenceIsZero(a, b);
}

/** The items of a tuple or interval written "(a, b]" with no bracket inside; otherwise the whole answer. */
function splitTuple(input: string): string[] {
  const expr = stripProperlyFormattedCommas(input);
  if (expr.length === 0) return [];
  const inner = expr.slice(1, -1);
  if (expr.length > 2 && TUPLE_CHARS.includes(expr[0]!) && TUPLE_CHARS.includes(expr.at(-1)!) && ![...TUPLE_CHARS].some((c) => inner.includes(c))) {
    return inner.split(',').map((e) => e.trim());
  }
  return [expr];
}

/** grade_answer(given_answer, ground_truth). */
export function prm800kGradeAnswer(given: string | null, groundTruth: string): boolean {
  if (given === null) return false;
  if (mathdNormalize(groundTruth) === mathdNormalize(given)) return true;
  const gt = prm800kNormalize(groundTruth);
  const g = prm800kNormalize(given);
  if (gt === g) return true;
  if (g.length === 0) return false;
  const gtItems = splitTuple(gt);
  const gItems = splitTuple(g);
  if (gtItems.length > 1 && (gt[0] !== g[0] || gt.at(-1) !== g.at(-1))) return false;
  if (gtItems.length !== gItems.length) return false;
  return gtItems.every((ref, i) => {
    const item = gItems[i]!;
    if (isFrac(ref) && isFrac(item)) return ref === item;
    if (strIsInt(ref) !== strIsInt(item)) return false;
    return equalUnderSympy(ref, item);
  });
}

/**
 * PRM800K's own solutions end with "# Answer" and the answer on the next line; MATH-style
 * responses box it. The last \boxed{} (MATH's extraction), else the line after the last "# Answer".
 */
function extractMath500(response: string): string | null {
  const boxed = lastBoxedContent(response);
  if (boxed !== null) return boxed;
  const at = response.lastIndexOf('# Answer');
  if (at < 0) return null;
  const line = response.slice(at + '# Answer'.length).split('\n').find((l) => l.trim() !== '');
  return line === undefined ? null : line.trim();
}

export const math500Scorer: BenchmarkScorer = {
  name: 'math500',
  describe: 'openai/prm800k grade_answer: MATH normalisation, then its own and sympy equality',
  reference: (gold) => (gold.includes('\\boxed') ? lastBoxedContent(gold) : gold),
  extract: extractMath500,
  equal: (reference, answer) => {
    try {
      return prm800kGradeAnswer(answer, reference);
    } catch {
      return false;
    }
  },
};
