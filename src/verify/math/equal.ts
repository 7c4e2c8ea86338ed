// Equivalence of two final answers (spec section 3): string normalisation, then numeric tolerance,
// then symbolic equality, applied item by item over the answer's structure (structure.ts).
//
// Numeric tolerance: exact forms (integers, fractions, radicals, pi, ...) on both sides are compared
// at relative 1e-9 (floating-point noise only), so 13535 != 13536 and 448/15625 != 448/15626. When one
// side is written as a decimal approximation ("0.8660") and the other side's exact value is not an
// integer, relative 1e-4 applies, as Python's math.isclose(rel_tol=1e-4) in the Qwen2.5-Math grader.
// Symbolic equality of expressions with variables: both sides are evaluated at 9 seeded random
// points (three each in [0.3, 2.3], [2, 20] and [-2.3, -0.3]); they must agree (relative 1e-6)
// at every point where both are defined, and at least 3 such points must exist.
import { normalizeAnswer, textKey, decimalCommaVariant } from './normalize.ts';
import { parseExpression, evaluate, evaluateComplex, type ParsedExpression } from './expression.ts';
import { parseAnswer, isNameOnly, splitTopLevel, type Answer } from './structure.ts';
// mulberry32: seeded, so that symbolic checks give the same verdict every run.
import { mulberry32 } from '../../core/rng.ts';

export const NUMERIC_REL_TOL = 1e-4;
export const EXACT_REL_TOL = 1e-9;
const SYMBOLIC_REL_TOL = 1e-6;
const SAMPLE_POINTS = 9;

export function numbersClose(a: number, b: number, relTol = EXACT_REL_TOL): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const scale = Math.max(Math.abs(a), Math.abs(b));
  if (scale < 1e-12) return true;
  return Math.abs(a - b) <= relTol * scale;
}

const parseCache = new Map<string, ParsedExpression | null>();
function parseCached(text: string): ParsedExpression | null {
  let hit = parseCache.get(text);
  if (hit === undefined) {
    hit = parseExpression(text);
    if (parseCache.size > 10_000) parseCache.clear();
    parseCache.set(text, hit);
  }
  return hit;
}

/** The value, or NaN when undefined; an overflow (10^{400}) is NaN too, only a written \\infty is infinite. */
function safeEvaluate(e: ParsedExpression, env: Record<string, number>): number {
  try {
    const v = evaluate(e.json, env);
    return Number.isFinite(v) || mentionsInfinity(e.json) ? v : NaN;
  } catch {
    return NaN;
  }
}

/** The value of a constant expression, possibly complex; NaN parts when undefined or overflowing. */
function safeEvaluateComplex(e: ParsedExpression): { re: number; im: number } {
  try {
    const z = evaluateComplex(e.json, {});
    const finite = Number.isFinite(z.re) && Number.isFinite(z.im);
    return finite || mentionsInfinity(e.json) ? z : { re: NaN, im: NaN };
  } catch {
    return { re: NaN, im: NaN };
  }
}

function mentionsInfinity(node: unknown): boolean {
  if (node === 'PositiveInfinity' || node === 'NegativeInfinity') return true;
  return Array.isArray(node) && node.some(mentionsInfinity);
}

/** Values of `a` and `b` at shared random points: [a_K, b_K] for the points where both are finite. */
function samplePairs(a: ParsedExpression, b: ParsedExpression): Array<[number, number]> {
  const variables = [...new Set([...a.variables, ...b.variables])];
  const rand = mulberry32(12345);
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < SAMPLE_POINTS; k++) {
    // Points in [0.3, 2.3], [2, 20] (floors and slowly varying terms differ there) and [-2.3, -0.3]
    // (|x| is not x); points where a side is undefined (sqrt, log of negatives) are skipped.
    const env = Object.fromEntries(variables.map((v) => [v, k % 3 === 0 ? 0.3 + 2 * rand() : k % 3 === 1 ? 2 + 18 * rand() : -0.3 - 2 * rand()]));
    const va = safeEvaluate(a, env);
    const vb = safeEvaluate(b, env);
    if (Number.isFinite(va) && Number.isFinite(vb)) pairs.push([va, vb]);
  }
  return pairs;
}

const DECIMAL_RE = /\d\.\d|(^|[^\d])\.\d/;

/** Relative tolerance for two numbers (see the header): loose only for a decimal approximation of a non-integer exact value. */
function numericTolerance(goldText: string, goldValue: number, predText: string, predValue: number): number {
  // Two integers are equal only when identical (11111111100 != 11111111101 although their ratio is 1 + 1e-10).
  if (Number.isInteger(goldValue) && Number.isInteger(predValue) && Math.abs(goldValue) <= Number.MAX_SAFE_INTEGER) return 0;
  const gDecimal = DECIMAL_RE.test(goldText);
  const pDecimal = DECIMAL_RE.test(predText);
  if (gDecimal === pDecimal) return EXACT_REL_TOL;
  const exact = gDecimal ? predValue : goldValue;
  return Number.isInteger(exact) ? EXACT_REL_TOL : NUMERIC_REL_TOL;
}

interface Side {
  percent: boolean;
}

/** Two scalar answers: text key, then numbers (with percent alternatives), then symbolic sampling. */
export function scalarsEqual(gold: string, pred: string, goldSide: Side = { percent: false }, predSide: Side = { percent: false }): boolean {
  if (gold === pred || textKey(gold) === textKey(pred)) return true;
  // Integer literals compare exactly, also beyond 2^53.
  if (/^-?\d+$/.test(gold.trim()) && /^-?\d+$/.test(pred.trim()) && !goldSide.percent && !predSide.percent) return BigInt(gold.trim()) === BigInt(pred.trim());
  const g = parseCached(gold);
  const p = parseCached(pred);
  if (!g || !p) return false;
  if (g.variables.length === 0 && p.variables.length === 0) {
    const zg = safeEvaluateComplex(g);
    const zp = safeEvaluateComplex(p);
    // Complex values ("6 - 5i"): both parts, at the exact tolerance scaled by the larger modulus.
    if (zg.im !== 0 || zp.im !== 0) {
      const scale = Math.max(Math.hypot(zg.re, zg.im), Math.hypot(zp.re, zp.im), 1e-12);
      return Math.abs(zg.re - zp.re) <= EXACT_REL_TOL * scale && Math.abs(zg.im - zp.im) <= EXACT_REL_TOL * scale;
    }
    const vg = zg.re;
    const vp = zp.re;
    const close = (x: number, y: number): boolean => numbersClose(x, y, numericTolerance(gold, x, pred, y));
    if (close(vg, vp)) return true;
    // "50\%" against 0.5 (and the reverse): the percent sign scales by 1/100.
    if (goldSide.percent !== predSide.percent) {
      return goldSide.percent ? close(vg / 100, vp) : close(vg, vp / 100);
    }
    return false;
  }
  const pairs = samplePairs(g, p);
  return pairs.length >= 3 && pairs.every(([a, b]) => numbersClose(a, b, SYMBOLIC_REL_TOL));
}

/** The sign of the constant c with f = c·g at every sampled point (0 when there is no such c). */
function proportionalitySign(f: string, g: string): number {
  const df = parseCached(f);
  const dg = parseCached(g);
  if (!df || !dg || df.variables.length === 0) return 0;
  const pairs = samplePairs(df, dg).filter(([a, b]) => Math.abs(a) > 1e-9 && Math.abs(b) > 1e-9);
  if (pairs.length < 3) return 0;
  const ratio = pairs[0]![0] / pairs[0]![1];
  return pairs.every(([a, b]) => numbersClose(a / b, ratio, SYMBOLIC_REL_TOL)) ? Math.sign(ratio) : 0;
}

/** Equations a = b and c = d are equal when a - b is a non-zero constant multiple of c - d. */
function equationsEqual(g: { lhs: string; rhs: string }, p: { lhs: string; rhs: string }): boolean {
  if (g.lhs.replace(/\s/g, '') === p.lhs.replace(/\s/g, '') && scalarsEqual(g.rhs, p.rhs)) return true;
  return proportionalitySign(`(${g.lhs})-(${g.rhs})`, `(${p.lhs})-(${p.rhs})`) !== 0;
}

/** Relations lhs op rhs: the same op, and lhs - rhs a positive multiple of the other's (any multiple for "!="). */
function relationsEqual(g: { op: string; lhs: string; rhs: string }, p: { op: string; lhs: string; rhs: string }): boolean {
  if (g.op !== p.op) return false;
  if (scalarsEqual(g.lhs, p.lhs) && scalarsEqual(g.rhs, p.rhs)) return true;
  if (g.op === '!=' && scalarsEqual(g.lhs, p.rhs) && scalarsEqual(g.rhs, p.lhs)) return true;
  const sign = proportionalitySign(`(${g.lhs})-(${g.rhs})`, `(${p.lhs})-(${p.rhs})`);
  return g.op === '!=' ? sign !== 0 : sign > 0;
}

/** An equation whose left side only names the unknown ("x = 3", "f(x) = 2x") stands for its right side. */
function valueOf(a: Answer): Answer {
  if (a.kind === 'equation' && (isNameOnly(a.lhs) || (isConstant(a.lhs) && isConstant(a.rhs)))) return parseAnswer(a.rhs);
  return a;
}

/** No letters outside LaTeX commands: "5 + 5 + 1", "\\frac{1}{2}". */
function isConstant(s: string): boolean {
  return !/[a-zA-Z]/.test(s.replace(/\\[a-zA-Z]+/g, ''));
}

/**
 * A relation in one variable that is affine in it ("-x > -1", "2x <= 6") as the interval it describes;
 * null otherwise. f = lhs - rhs must satisfy f < 0 (or <= 0).
 */
function relationAsInterval(r: { op: string; lhs: string; rhs: string }): Answer | null {
  if (r.op === '!=') return null;
  const f = parseCached(`(${r.lhs})-(${r.rhs})`);
  if (!f || f.variables.length !== 1) return null;
  const v = f.variables[0]!;
  const at = (x: number): number => safeEvaluate(f, { [v]: x });
  const [f0, f1, f2] = [at(0), at(1), at(2.5)];
  const slope = f1 - f0;
  if (!Number.isFinite(slope) || Math.abs(slope) < 1e-12 || !numbersClose(f2 - f0, 2.5 * slope, 1e-9)) return null;
  const root = String(-f0 / slope);
  const strict = r.op === '<';
  // slope > 0: f < 0 left of the root; slope < 0: right of it.
  return slope > 0
    ? { kind: 'tuple', open: '(', close: strict ? ')' : ']', items: [{ kind: 'scalar', text: '-\\infty' }, { kind: 'scalar', text: root }] }
    : { kind: 'tuple', open: strict ? '(' : '[', close: ')', items: [{ kind: 'scalar', text: root }, { kind: 'scalar', text: '\\infty' }] };
}

function itemsAsList(a: Answer): Answer[] {
  return a.kind === 'set' ? a.items : [a];
}

/**
 * Unordered match with set semantics (as math-verify): every gold item equals some pred item and
 * every pred item equals some gold item, so repeated items do not count twice. Each pair is compared
 * once: both directions ask about the same pairs, and asking twice would double the work at every
 * level of nested sets (2^depth comparisons for "\{\{..1..\}\}").
 */
function unorderedEqual(gold: Answer[], pred: Answer[], sides: [Side, Side]): boolean {
  if (gold.length === 0 || pred.length === 0) return gold.length === pred.length;
  const known = new Map<number, boolean>();
  const equal = (i: number, j: number): boolean => {
    const key = i * pred.length + j;
    let hit = known.get(key);
    if (hit === undefined) {
      hit = answersEqual(gold[i]!, pred[j]!, sides);
      known.set(key, hit);
    }
    return hit;
  };
  return gold.every((_, i) => pred.some((_, j) => equal(i, j))) && pred.every((_, j) => gold.some((_, i) => equal(i, j)));
}

export function answersEqual(goldIn: Answer, predIn: Answer, sides: [Side, Side]): boolean {
  if (goldIn.kind === 'equation' && predIn.kind === 'equation' && equationsEqual(goldIn, predIn)) return true;
  const gold = valueOf(goldIn);
  const pred = valueOf(predIn);
  if (gold.kind === 'equation' && pred.kind === 'equation') return false;
  if (gold.kind === 'relation' && pred.kind === 'relation') return relationsEqual(gold, pred) || answersEqualViaInterval(gold, pred, sides);
  if (gold.kind === 'relation' || pred.kind === 'relation') return answersEqualViaInterval(gold, pred, sides);
  // An ordered tuple "(1, 3)" against a bare list "1, 3" or "{1, 3}": compared in order.
  if (gold.kind === 'tuple' && gold.open === '(' && pred.kind === 'set' && !pred.explicit) {
    return gold.items.length === pred.items.length && gold.items.every((g, i) => answersEqual(g, pred.items[i]!, sides));
  }
  if (gold.kind === 'set' || pred.kind === 'set') {
    // A one-item list equals its item; otherwise both sides must be collections of equal size.
    return unorderedEqual(itemsAsList(gold).map(valueOf), itemsAsList(pred).map(valueOf), sides);
  }
  if (gold.kind === 'tuple' && pred.kind === 'tuple') {
    if (gold.items.length !== pred.items.length) return false;
    // Brackets matter for intervals: (0, 1] is not [0, 1]. A 2-tuple written with "(" ... ")" equals "(" ... ")" only.
    if (gold.open !== pred.open || gold.close !== pred.close) return false;
    return gold.items.every((g, i) => answersEqual(g, pred.items[i]!, sides));
  }
  if (gold.kind === 'matrix' && pred.kind === 'matrix') {
    if (gold.rows.length !== pred.rows.length) return false;
    return gold.rows.every((row, i) => row.length === pred.rows[i]!.length && row.every((c, j) => answersEqual(c, pred.rows[i]![j]!, sides)));
  }
  if (gold.kind === 'scalar' && pred.kind === 'scalar') return scalarsEqual(gold.text, pred.text, sides[0], sides[1]);
  return false;
}

function answersEqualViaInterval(gold: Answer, pred: Answer, sides: [Side, Side]): boolean {
  const g = gold.kind === 'relation' ? relationAsInterval(gold) : gold;
  const p = pred.kind === 'relation' ? relationAsInterval(pred) : pred;
  return g !== null && p !== null && g.kind !== 'relation' && p.kind !== 'relation' && answersEqual(g, p, sides);
}

/** True when the two final answers (already extracted) are mathematically equivalent. */
export function finalAnswersEqual(gold: string, pred: string): boolean {
  const g = normalizeAnswer(gold);
  const p = normalizeAnswer(pred);
  if (g.text === '' || p.text === '') return false;
  if (g.text === p.text && g.percent === p.percent) return true;
  const sides: [Side, Side] = [{ percent: g.percent }, { percent: p.percent }];
  if (answersEqual(parseAnswer(g.text), parseAnswer(p.text), sides)) return true;
  // A decimal comma ("1000,99", "0,111") on one side against a plain number on the other.
  const gComma = decimalCommaVariant(g.text);
  const pComma = decimalCommaVariant(p.text);
  if (gComma !== null && pComma === null && /^-?[\d.]+$/.test(p.text)) return scalarsEqual(gComma, p.text, ...sides);
  if (pComma !== null && gComma === null && /^-?[\d.]+$/.test(g.text)) return scalarsEqual(g.text, pComma, ...sides);
  return false;
}
