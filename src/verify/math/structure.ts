// Splits a normalised answer into its structure: a scalar, an ordered tuple or interval, an
// unordered set or list of answers, a union of intervals, a matrix, or an equation. The items are
// compared one by one (equal.ts); only scalars reach the expression parser.
//
// Linear in the input: the text's brackets are indexed once (BracketIndex), so that peeling one
// level of brackets ("{{{1}}}" -> "{{1}}") or splitting at the top level costs only what that level
// holds, not a rescan of everything nested inside it. Peeling is a loop, not a recursion; the
// levels that do recurse (the items of a set, tuple, union, list or matrix) stop at
// MAX_STRUCTURE_DEPTH, below which a part is kept as scalar text.

export type Answer =
  | { kind: 'scalar'; text: string }
  /** Bracketed, ordered: tuples "(1, 2)", intervals "[0, 1)"; open/close are the bracket characters. */
  | { kind: 'tuple'; open: string; close: string; items: Answer[] }
  /** Unordered: "\{1, 2\}", bare lists "1, 2", "x = 1 or x = 2", unions of intervals. */
  | { kind: 'set'; items: Answer[]; explicit: boolean }
  | { kind: 'matrix'; rows: Answer[][] }
  | { kind: 'equation'; lhs: string; rhs: string }
  /** An inequality or "!=" that is not a plain interval: lhs op rhs with op one of < <= != (">" forms are flipped). */
  | { kind: 'relation'; op: '<' | '<=' | '!='; lhs: string; rhs: string };

/** Nesting of sets, tuples, unions, lists and matrices kept as structure; real answers use a handful of levels. */
export const MAX_STRUCTURE_DEPTH = 100;

const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isOpener(c: number): boolean {
  return c === 0x28 || c === 0x5b || c === OPEN_BRACE;
}

function isCloser(c: number): boolean {
  return c === 0x29 || c === 0x5d || c === CLOSE_BRACE;
}

/** The characters String.prototype.trim removes (WhiteSpace and LineTerminator). */
function isTrimmed(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The characters a regular expression's "." does not match. */
function isLineTerminator(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

/** A separator of splitTopLevel: a literal string, or a pattern tried at each top-level position. */
interface Separator {
  literal?: string;
  /** Anchored at the start ("^(?:...)"), tried on the rest of the part from the position on. */
  pattern?: RegExp;
  /** The characters a match can start with: other positions are not tried. */
  firstChars: string;
}

function separatorOf(separator: string | RegExp): Separator {
  if (typeof separator === 'string') return { literal: separator, firstChars: separator[0] ?? '' };
  return { pattern: new RegExp(`^(?:${separator.source})`), firstChars: '' };
}

const UNION_SEPARATOR: Separator = { pattern: /^(?:\\cup|∪|\bU\b)/, firstChars: '\\∪U' };
const LIST_SEPARATOR: Separator = { pattern: /^(?:,|;|\\text\{\s*(?:and|or)\s*\})/, firstChars: ',;\\' };
const ITEM_SEPARATOR: Separator = { pattern: /^(?:,|;)/, firstChars: ',;' };
const COMMA_SEPARATOR: Separator = { literal: ',', firstChars: ',' };
const APPROX_SEPARATOR: Separator = { pattern: /^(?:\\approx|≈)/, firstChars: '\\≈' };
const NOT_EQUAL_SEPARATOR: Separator = { literal: '!=', firstChars: '!' };
const EQUALS_SEPARATOR: Separator = { literal: '=', firstChars: '=' };

/** A part of the indexed text: [start, end). */
interface Span {
  start: number;
  end: number;
}

/**
 * The bracket structure of a text, computed in one pass. The scan is splitTopLevel's: "(", "[",
 * "{" and the escaped "\{" open, ")", "]", "}" and "\}" close, whatever their kinds; a separator
 * counts only at depth 0 of the part being split.
 */
class BracketIndex {
  readonly text: string;
  /** depth[i]: the depth before the character at i, scanning from the start of the text. */
  private readonly depth: Int32Array;
  /** For an opening bracket at i: the index just past its closing bracket (the first later return to depth[i]); -1 otherwise. */
  private readonly closeAfter: Int32Array;
  /** The positions outside every bracket token, grouped by depth (ascending within a group). */
  private readonly plainByDepth: Int32Array;
  /** plainByDepth[groupStart[d - minDepth] .. groupStart[d - minDepth + 1]) holds the plain positions at depth d. */
  private readonly groupStart: Int32Array;
  private readonly minDepth: number;
  /** Positions of line terminators, ascending. */
  private readonly lineBreaks: number[] = [];

  constructor(text: string) {
    this.text = text;
    const n = text.length;
    const depth = new Int32Array(n + 1);
    const closeAfter = new Int32Array(n).fill(-1);
    const plain = new Uint8Array(n);
    const openStack = new Int32Array(n);
    let open = 0;
    let d = 0;
    let min = 0;
    let max = 0;
    for (let i = 0; i < n; i++) {
      depth[i] = d;
      const c = text.charCodeAt(i);
      if (isLineTerminator(c)) this.lineBreaks.push(i);
      let width = 1;
      let delta = 0;
      if (c === BACKSLASH && i + 1 < n && (text.charCodeAt(i + 1) === OPEN_BRACE || text.charCodeAt(i + 1) === CLOSE_BRACE)) {
        width = 2;
        delta = text.charCodeAt(i + 1) === OPEN_BRACE ? 1 : -1;
      } else if (isOpener(c)) delta = 1;
      else if (isCloser(c)) delta = -1;
      else plain[i] = 1;
      if (delta > 0) openStack[open++] = i;
      else if (delta < 0 && open > 0) closeAfter[openStack[--open]!] = i + width;
      if (width === 2) depth[++i] = d;
      d += delta;
      if (d < min) min = d;
      if (d > max) max = d;
    }
    depth[n] = d;
    const groups = max - min + 1;
    const groupStart = new Int32Array(groups + 1);
    for (let i = 0; i < n; i++) if (plain[i]) groupStart[depth[i]! - min + 1]!++;
    for (let g = 0; g < groups; g++) groupStart[g + 1]! += groupStart[g]!;
    const fill = groupStart.slice(0, groups);
    const plainByDepth = new Int32Array(groupStart[groups]!);
    for (let i = 0; i < n; i++) if (plain[i]) plainByDepth[fill[depth[i]! - min]!++] = i;
    this.depth = depth;
    this.closeAfter = closeAfter;
    this.plainByDepth = plainByDepth;
    this.groupStart = groupStart;
    this.minDepth = min;
  }

  slice(s: Span): string {
    return this.text.slice(s.start, s.end);
  }

  trim(start: number, end: number): Span {
    while (start < end && isTrimmed(this.text.charCodeAt(start))) start++;
    while (end > start && isTrimmed(this.text.charCodeAt(end - 1))) end--;
    return { start, end };
  }

  startsWith(s: Span, prefix: string): boolean {
    return s.end - s.start >= prefix.length && this.text.startsWith(prefix, s.start);
  }

  endsWith(s: Span, suffix: string): boolean {
    return s.end - s.start >= suffix.length && this.text.startsWith(suffix, s.end - suffix.length);
  }

  /** True when the bracket opening at s.start closes exactly at s.end. */
  wrapsWhole(s: Span): boolean {
    return s.start < s.end && this.closeAfter[s.start] === s.end;
  }

  hasLineBreak(start: number, end: number): boolean {
    const at = lowerBound(this.lineBreaks, start);
    return at < this.lineBreaks.length && this.lineBreaks[at]! < end;
  }

  /** splitTopLevel over a part: the trimmed pieces between separators at depth 0 of the part. */
  split(s: Span, separator: Separator): Span[] {
    const parts: Span[] = [];
    const text = this.text;
    let pieceStart = s.start;
    const group = this.depth[s.start]! - this.minDepth;
    if (s.start < s.end && group >= 0 && group + 1 < this.groupStart.length) {
      const positions = this.plainByDepth;
      const last = this.groupStart[group + 1]!;
      for (let k = lowerBound(positions, s.start, this.groupStart[group]!, last); k < last; k++) {
        const i = positions[k]!;
        if (i >= s.end) break;
        if (i < pieceStart) continue;
        if (separator.firstChars !== '' && !separator.firstChars.includes(text[i]!)) continue;
        let length = 0;
        if (separator.literal !== undefined) {
          const lit = separator.literal;
          if (i + lit.length <= s.end && text.startsWith(lit, i) && !(lit === '=' && i > s.start && /[<>!\\]/.test(text[i - 1]!))) length = lit.length;
        } else {
          const m = separator.pattern!.exec(text.slice(i, s.end));
          if (m && m[0].length > 0) length = m[0].length;
        }
        if (length > 0) {
          parts.push(this.trim(pieceStart, i));
          pieceStart = i + length;
        }
      }
    }
    parts.push(this.trim(pieceStart, s.end));
    return parts;
  }
}

/** The first index k in [from, to) with values[k] >= key (to when none). */
function lowerBound(values: ArrayLike<number>, key: number, from = 0, to = values.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Splits on a separator that is outside every bracket (escaped \{ \} count as brackets too). */
export function splitTopLevel(s: string, separator: string | RegExp): string[] {
  const index = new BracketIndex(s);
  return index.split({ start: 0, end: s.length }, separatorOf(separator)).map((p) => index.slice(p));
}

/**
 * A left-hand side that only names what the answer is: x, a_1, f(x), \theta, (p, q), |AB|, A:B,
 * \frac{NO}{BO}, S_{MBCN}:S. It holds letters, subscripts, brackets and ratio/fraction marks, but no
 * digits or arithmetic outside subscripts.
 */
export function isNameOnly(lhs: string): boolean {
  const t = lhs.trim();
  if (t === '') return false;
  const stripped = t
    .replace(/_\{[^{}]*\}|_\w/g, '')
    .replace(/\\(?:frac|overline|vec|angle|triangle|text|mathrm|operatorname)/g, '')
    .replace(/\\[a-zA-Z]+/g, 'a')
    .replace(/[{}()|:,\s\\]/g, '');
  return stripped !== '' && /^[a-zA-Z']+$/.test(stripped) && stripped.length <= 12;
}

const INEQUALITY_RE = /<=|>=|<|>/g;

/** "x < 3", "1 \le x < 2", "x \geq -1" → an interval, when one side is a bare variable. */
function inequalityToInterval(s: string): Answer | null {
  const ops = s.match(INEQUALITY_RE);
  if (!ops || ops.length > 2) return null;
  const parts = s.split(INEQUALITY_RE).map((p) => p.trim());
  const isLess = (op: string): boolean => op.startsWith('<');
  const isStrict = (op: string): boolean => op === '<' || op === '>';
  if (ops.length === 1) {
    const [left, right] = parts as [string, string];
    const op = ops[0]!;
    let bound: string;
    let varOnLeft: boolean;
    if (isNameOnly(left) && !isNameOnly(right)) [bound, varOnLeft] = [right, true];
    else if (isNameOnly(right) && !isNameOnly(left)) [bound, varOnLeft] = [left, false];
    else return null;
    // x < b or b > x: upper bound.
    const upper = isLess(op) === varOnLeft;
    const strict = isStrict(op);
    const b: Answer = { kind: 'scalar', text: bound };
    return upper
      ? { kind: 'tuple', open: '(', close: strict ? ')' : ']', items: [{ kind: 'scalar', text: '-\\infty' }, b] }
      : { kind: 'tuple', open: strict ? '(' : '[', close: ')', items: [b, { kind: 'scalar', text: '\\infty' }] };
  }
  const [a, mid, b] = parts as [string, string, string];
  if (!isNameOnly(mid) || isLess(ops[0]!) !== isLess(ops[1]!)) return null;
  const [lo, hi, loOp, hiOp] = isLess(ops[0]!) ? [a, b, ops[0]!, ops[1]!] : [b, a, ops[1]!, ops[0]!];
  return { kind: 'tuple', open: isStrict(loOp) ? '(' : '[', close: isStrict(hiOp) ? ')' : ']', items: [{ kind: 'scalar', text: lo }, { kind: 'scalar', text: hi }] };
}

const MEMBER_PREFIX_RE = /\\?[a-zA-Z]+\s*\\in\s*/y;
const MATRIX_NAMES = ['matrix', 'pmatrix', 'bmatrix', 'vmatrix', 'Bmatrix', 'Vmatrix', 'array'];

/** "x \in S" (S on one line): where S starts, or -1. */
function memberRest(index: BracketIndex, s: Span): number {
  MEMBER_PREFIX_RE.lastIndex = s.start;
  const m = MEMBER_PREFIX_RE.exec(index.text);
  if (!m) return -1;
  const rest = s.start + m[0].length;
  return rest < s.end && !index.hasLineBreak(rest, s.end) ? rest : -1;
}

/**
 * "\begin{pmatrix} .. \end{pmatrix}" (also matrix, bmatrix, vmatrix, Bmatrix, Vmatrix, and array
 * with an optional column spec): the text between begin and end, or null.
 */
function matrixBody(index: BracketIndex, s: Span): string | null {
  if (!index.startsWith(s, '\\begin{')) return null;
  const text = index.text;
  const nameAt = s.start + 7;
  const name = MATRIX_NAMES.find((n) => text.startsWith(`${n}}`, nameAt));
  if (name === undefined) return null;
  const end = `\\end{${name}}`;
  let bodyStart = nameAt + name.length + 1;
  const bodyEnd = s.end - end.length;
  if (bodyEnd < bodyStart || !text.startsWith(end, bodyEnd)) return null;
  // An optional column spec "{cc}" (up to the first "}"), when it ends before "\end".
  if (text[bodyStart] === '{') {
    let close = bodyStart + 1;
    while (close < bodyEnd && text[close] !== '}') close++;
    if (close < bodyEnd) bodyStart = close + 1;
  }
  return text.slice(bodyStart, bodyEnd);
}

/** Parses a normalised answer into its structure. */
export function parseAnswer(s: string): Answer {
  const index = new BracketIndex(s);
  return parseSpan(index, { start: 0, end: s.length }, 0);
}

function parseSpan(index: BracketIndex, whole: Span, depth: number): Answer {
  let s = index.trim(whole.start, whole.end);
  const nested = (p: Span): Answer => parseSpan(index, p, depth + 1);
  for (;;) {
    s = index.trim(s.start, s.end);
    if (depth > MAX_STRUCTURE_DEPTH) return { kind: 'scalar', text: index.slice(s) };
    // "x \in [1, 2]" -> "[1, 2]".
    const member = memberRest(index, s);
    if (member >= 0) s = index.trim(member, s.end);

    const unionParts = index.split(s, UNION_SEPARATOR);
    if (unionParts.length > 1) return { kind: 'set', items: unionParts.map(nested), explicit: true };

    const listParts = index.split(s, LIST_SEPARATOR).filter((p) => p.end > p.start);
    if (listParts.length > 1) return { kind: 'set', items: listParts.map(nested), explicit: false };

    const body = matrixBody(index, s);
    if (body !== null) {
      const rows = body.split(/\\\\/).map((r) => r.trim()).filter((r) => r !== '');
      return { kind: 'matrix', rows: rows.map((r) => r.split('&').map((c) => parseText(c.trim(), depth + 1))) };
    }

    if (index.startsWith(s, '\\{') && index.endsWith(s, '\\}') && index.wrapsWhole(s)) {
      const inner = index.trim(s.start + 2, s.end - 2);
      const items = inner.end === inner.start ? [] : index.split(inner, COMMA_SEPARATOR).map(nested);
      return { kind: 'set', items, explicit: true };
    }

    // "{1, 3}" without backslashes: a list of answers.
    if (index.startsWith(s, '{') && index.endsWith(s, '}') && index.wrapsWhole(s)) {
      const inner = { start: s.start + 1, end: s.end - 1 };
      const items = index.split(inner, ITEM_SEPARATOR);
      if (items.length > 1) return { kind: 'set', items: items.map(nested), explicit: false };
      s = inner;
      continue;
    }

    const text = index.text;
    if ((index.startsWith(s, '(') || index.startsWith(s, '[')) && (index.endsWith(s, ')') || index.endsWith(s, ']')) && index.wrapsWhole(s)) {
      const inner = { start: s.start + 1, end: s.end - 1 };
      if (index.startsWith(index.trim(inner.start, inner.end), '\\begin{')) {
        s = inner;
        continue;
      }
      const items = index.split(inner, ITEM_SEPARATOR);
      if (items.length > 1) return { kind: 'tuple', open: text[s.start]!, close: text[s.end - 1]!, items: items.map(nested) };
    }

    // "a = b \approx c": the exact value counts, the approximation is dropped.
    const approx = index.split(s, APPROX_SEPARATOR);
    if (approx.length > 1) {
      const first = approx[0]!;
      s = first.end > first.start && !isNameOnly(index.slice(first)) ? first : approx[approx.length - 1]!;
    }

    const notEqual = index.split(s, NOT_EQUAL_SEPARATOR);
    if (notEqual.length === 2) return { kind: 'relation', op: '!=', lhs: index.slice(notEqual[0]!), rhs: index.slice(notEqual[1]!) };

    const sides = index.split(s, EQUALS_SEPARATOR).filter((x, i, all) => !(i === 0 && x.end === x.start && all.length > 1));
    if (sides.length === 2 && sides[0]!.end > sides[0]!.start && sides[1]!.end > sides[1]!.start) return { kind: 'equation', lhs: index.slice(sides[0]!), rhs: index.slice(sides[1]!) };
    // A chain "x = 5 + 5 + 1 = 11": the name and the last value.
    if (sides.length > 2) {
      const lastSide = sides[sides.length - 1]!;
      if (isNameOnly(index.slice(sides[0]!))) return { kind: 'equation', lhs: index.slice(sides[0]!), rhs: index.slice(lastSide) };
      s = lastSide;
      continue;
    }
    return leaf(index.slice(s), depth);
  }
}

/** A part with no structure around it: an interval or relation written as an inequality, a "\pm" pair, or a scalar. */
function leaf(s: string, depth: number): Answer {
  const interval = inequalityToInterval(s);
  if (interval) return interval;
  const ops = s.match(INEQUALITY_RE);
  if (ops && ops.length === 1) {
    const [lhs, rhs] = s.split(INEQUALITY_RE).map((p) => p.trim()) as [string, string];
    const op = ops[0]!;
    // a > b is b < a.
    return op.startsWith('<') ? { kind: 'relation', op: op as '<' | '<=', lhs, rhs } : { kind: 'relation', op: op.replace('>', '<') as '<' | '<=', lhs: rhs, rhs: lhs };
  }

  // "1 \pm \sqrt{2}" -> the two answers.
  if (/\\pm/.test(s) && !/\\pm.*\\pm/.test(s)) {
    return { kind: 'set', items: [parseText(s.replace('\\pm', '+'), depth + 1), parseText(s.replace('\\pm', '-'), depth + 1)], explicit: false };
  }
  return { kind: 'scalar', text: s };
}

function parseText(s: string, depth: number): Answer {
  return parseSpan(new BracketIndex(s), { start: 0, end: s.length }, depth);
}
