// The structure parser as it was before it was made linear (commit 77d8fd8): it rescans the whole
// part at every nesting level. Kept only as the oracle that test/verify/math-structure.test.ts
// compares the linear parser (src/verify/math/structure.ts) with, on inputs small enough for it.

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

const OPENERS = new Set(['(', '[', '{']);
const CLOSERS = new Set([')', ']', '}']);

/** Splits on a separator that is outside every bracket (escaped \{ \} count as brackets too). */
export function splitTopLevel(s: string, separator: string | RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && (s[i + 1] === '{' || s[i + 1] === '}')) {
      depth += s[i + 1] === '{' ? 1 : -1;
      i++;
      continue;
    }
    if (OPENERS.has(ch)) depth++;
    else if (CLOSERS.has(ch)) depth--;
    else if (depth === 0) {
      if (typeof separator === 'string') {
        if (s.startsWith(separator, i) && !(separator === '=' && /[<>!\\]/.test(s[i - 1] ?? ''))) {
          parts.push(s.slice(start, i));
          start = i + separator.length;
          i += separator.length - 1;
        }
      } else {
        const m = new RegExp(`^(?:${separator.source})`).exec(s.slice(i));
        if (m && m[0].length > 0) {
          parts.push(s.slice(start, i));
          start = i + m[0].length;
          i += m[0].length - 1;
        }
      }
    }
  }
  parts.push(s.slice(start));
  return parts.map((p) => p.trim());
}

/** True when the bracket opening at 0 closes exactly at the end of the string. */
function wrapsWhole(s: string): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && (s[i + 1] === '{' || s[i + 1] === '}')) {
      depth += s[i + 1] === '{' ? 1 : -1;
      i++;
      if (depth === 0 && i < s.length - 1) return false;
      continue;
    }
    if (OPENERS.has(ch)) depth++;
    else if (CLOSERS.has(ch)) {
      depth--;
      if (depth === 0 && i < s.length - 1) return false;
    }
  }
  return depth === 0;
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

const MATRIX_RE = /^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^}]*\})?([\s\S]*)\\end\{\1\}$/;
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

/** Parses a normalised answer into its structure. */
export function parseAnswer(s: string): Answer {
  s = s.trim();
  // "x \in [1, 2]" → "[1, 2]".
  const member = /^\\?[a-zA-Z]+\s*\\in\s*(.+)$/.exec(s);
  if (member) s = member[1]!.trim();

  const unionParts = splitTopLevel(s, /\\cup|∪|\bU\b/);
  if (unionParts.length > 1) return { kind: 'set', items: unionParts.map(parseAnswer), explicit: true };

  const listParts = splitTopLevel(s, /,|;|\\text\{\s*(?:and|or)\s*\}/).filter((p) => p !== '');
  if (listParts.length > 1) return { kind: 'set', items: listParts.map(parseAnswer), explicit: false };

  const matrix = MATRIX_RE.exec(s);
  if (matrix) {
    const rows = matrix[2]!.split(/\\\\/).map((r) => r.trim()).filter((r) => r !== '');
    return { kind: 'matrix', rows: rows.map((r) => r.split('&').map((c) => parseAnswer(c.trim()))) };
  }

  if (s.startsWith('\\{') && s.endsWith('\\}') && wrapsWhole(s)) {
    const inner = s.slice(2, -2).trim();
    const items = inner === '' ? [] : splitTopLevel(inner, ',').map(parseAnswer);
    return { kind: 'set', items, explicit: true };
  }

  // "{1, 3}" without backslashes: a list of answers.
  if (s.startsWith('{') && s.endsWith('}') && wrapsWhole(s)) {
    const items = splitTopLevel(s.slice(1, -1), /,|;/);
    if (items.length > 1) return { kind: 'set', items: items.map(parseAnswer), explicit: false };
    return parseAnswer(s.slice(1, -1));
  }

  if ((s.startsWith('(') || s.startsWith('[')) && (s.endsWith(')') || s.endsWith(']')) && wrapsWhole(s)) {
    const inner = s.slice(1, -1);
    if (/^\\begin\{/.test(inner.trim())) return parseAnswer(inner);
    const items = splitTopLevel(inner, /,|;/);
    if (items.length > 1) return { kind: 'tuple', open: s[0]!, close: s[s.length - 1]!, items: items.map(parseAnswer) };
  }

  // "a = b \approx c": the exact value counts, the approximation is dropped.
  const approx = splitTopLevel(s, /\\approx|≈/);
  if (approx.length > 1) s = approx[0] !== '' && !isNameOnly(approx[0]!) ? approx[0]! : approx[approx.length - 1]!;

  const notEqual = splitTopLevel(s, '!=');
  if (notEqual.length === 2) return { kind: 'relation', op: '!=', lhs: notEqual[0]!, rhs: notEqual[1]! };

  const sides = splitTopLevel(s, '=').filter((x, i, all) => !(i === 0 && x === '' && all.length > 1));
  if (sides.length === 2 && sides[0] !== '' && sides[1] !== '') return { kind: 'equation', lhs: sides[0]!, rhs: sides[1]! };
  // A chain "x = 5 + 5 + 1 = 11": the name and the last value.
  if (sides.length > 2) return isNameOnly(sides[0]!) ? { kind: 'equation', lhs: sides[0]!, rhs: sides[sides.length - 1]! } : parseAnswer(sides[sides.length - 1]!);

  const interval = inequalityToInterval(s);
  if (interval) return interval;
  const ops = s.match(INEQUALITY_RE);
  if (ops && ops.length === 1) {
    const [lhs, rhs] = s.split(INEQUALITY_RE).map((p) => p.trim()) as [string, string];
    const op = ops[0]!;
    // a > b is b < a.
    return op.startsWith('<') ? { kind: 'relation', op: op as '<' | '<=', lhs, rhs } : { kind: 'relation', op: op.replace('>', '<') as '<' | '<=', lhs: rhs, rhs: lhs };
  }

  // "1 \pm \sqrt{2}" → the two answers.
  if (/\\pm/.test(s) && !/\\pm.*\\pm/.test(s)) {
    return { kind: 'set', items: [parseAnswer(s.replace('\\pm', '+')), parseAnswer(s.replace('\\pm', '-'))], explicit: false };
  }
  return { kind: 'scalar', text: s };
}
