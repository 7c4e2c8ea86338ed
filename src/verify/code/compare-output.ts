// stdin/stdout comparison with LiveCodeBench's rules (spec section 3; lcb_runner grade_stdio):
// strip the whole output and split it into lines, strip each line; the line counts must match;
// each pair of lines is equal as text, or else both split into whitespace tokens that are all
// decimals and the decimals are exactly equal (Python's Decimal: "1.0" equals "1", "1e2" equals
// "100"; NaN equals nothing). Deliberately not TACO's comparator, which accepts "YES" for "NO".

/** A Python Decimal literal reduced to sign, coefficient and exponent (or infinity / NaN). */
type DecimalValue = { kind: 'finite'; negative: boolean; coefficient: string; exponent: number } | { kind: 'infinity'; negative: boolean } | { kind: 'nan' };

// Python's Decimal(str) grammar. Decimal removes every underscore before parsing ('_1' and
// '1__0' are accepted), so we do the same.
const DECIMAL_RE = /^([+-])?(?:(\d+)(?:\.(\d+)?)?|\.(\d+))(?:[eE]([+-]?\d+))?$/;
const SPECIAL_RE = /^([+-])?(inf|infinity|s?nan\d*)$/i;

export function parseDecimal(raw: string): DecimalValue | null {
  const token = raw.replaceAll('_', '');
  const special = SPECIAL_RE.exec(token);
  if (special) {
    const negative = special[1] === '-';
    return special[2]!.toLowerCase().startsWith('inf') ? { kind: 'infinity', negative } : { kind: 'nan' };
  }
  const m = DECIMAL_RE.exec(token);
  if (!m) return null;
  const intPart = m[2] ?? '';
  const fracPart = m[3] ?? m[4] ?? '';
  const exp = m[5] ? Number(m[5]) : 0;
  // Normalise on the digit string (not a bigint: a hostile line of a million zeros stays cheap)
  // so that equal values have equal representations.
  const all = (intPart + fracPart).replace(/^0+/, '');
  let end = all.length;
  while (end > 0 && all.charCodeAt(end - 1) === 48) end--;
  const kept = all.slice(0, end);
  const coefficient = kept;
  const exponent = kept === '' ? 0 : exp - fracPart.length + (all.length - kept.length);
  return { kind: 'finite', negative: m[1] === '-' && coefficient !== '', coefficient, exponent };
}

function decimalsEqual(a: DecimalValue, b: DecimalValue): boolean {
  if (a.kind === 'nan' || b.kind === 'nan') return false;
  if (a.kind === 'infinity' || b.kind === 'infinity') return a.kind === b.kind && a.negative === b.negative;
  return a.negative === (b as typeof a).negative && a.coefficient === (b as typeof a).coefficient && a.exponent === (b as typeof a).exponent;
}

// Python's str.split() / str.strip() whitespace. Stripping walks from both ends by hand: a regex
// anchored at the end would be quadratic on a hostile line with a long run of inner spaces.
const WS = /[\s\u001c-\u001f\u0085]+/u;
const isSpace = (c: string): boolean => WS.test(c);
function strip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isSpace(s[start]!)) start++;
  while (end > start && isSpace(s[end - 1]!)) end--;
  return s.slice(start, end);
}

function decimalTokens(line: string): DecimalValue[] | null {
  const tokens = line.split(WS).filter((t) => t.length > 0);
  const values: DecimalValue[] = [];
  for (const t of tokens) {
    const d = parseDecimal(t);
    if (!d) return null;
    values.push(d);
  }
  return values;
}

export interface OutputComparison {
  equal: boolean;
  /** Why not, in a few words (for the agents and the logs). */
  reason?: string;
}

export function compareOutput(actual: string, expected: string): OutputComparison {
  const got = strip(actual).split('\n').map(strip);
  const want = strip(expected).split('\n').map(strip);
  if (got.length !== want.length) return { equal: false, reason: `expected ${want.length} line(s), got ${got.length}` };
  for (let i = 0; i < want.length; i++) {
    if (got[i] === want[i]) continue;
    const g = decimalTokens(got[i]!);
    const w = decimalTokens(want[i]!);
    if (g && w && g.length === w.length && g.every((d, j) => decimalsEqual(d, w[j]!))) continue;
    return { equal: false, reason: `line ${i + 1} differs` };
  }
  return { equal: true };
}

/**
 * Value comparison, the layout set aside: both outputs split into whitespace tokens over all their
 * lines; the token counts must match and each pair be equal as text or as decimals (the rule
 * above). Used where a Tester's declared output is judged (MAS-OPD App. F.6 judges a test case by
 * its values: "1 2 3" declared where the reference prints three lines is the same test), never
 * for golden tests, which keep LiveCodeBench's line rule.
 */
export function compareValues(actual: string, expected: string): OutputComparison {
  const got = strip(actual).split(WS).filter((t) => t.length > 0);
  const want = strip(expected).split(WS).filter((t) => t.length > 0);
  if (got.length !== want.length) return { equal: false, reason: `expected ${want.length} value(s), got ${got.length}` };
  for (let i = 0; i < want.length; i++) {
    if (got[i] === want[i]) continue;
    const g = parseDecimal(got[i]!);
    const w = parseDecimal(want[i]!);
    if (g && w && decimalsEqual(g, w)) continue;
    return { equal: false, reason: `value ${i + 1} differs` };
  }
  return { equal: true };
}
