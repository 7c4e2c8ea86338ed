// The MATH dataset's answer normalisation and box extraction (Hendrycks et al. 2021), shared by
// three graders that reuse it: MATH's own `is_equiv` (hendrycks/math, modeling/equivalent.py, the
// module modeling/eval_math_gpt.py grades with), PRM800K's "mathd" first pass
// (openai/prm800k, grading/math_normalize.py) and DeepScaleR's `mathd_normalize_answer`
// (agentica-project/deepscaler, deepscaler/rewards/math_utils/utils.py).
//
// Reimplemented from the published behaviour, step for step, because the graders are plain string
// rewrites whose exact order decides the verdicts:
//   newlines, "\!" and doubled backslashes removed; tfrac/dfrac -> frac; \left, \right, degree
//   marks, "\$" and "\%" removed; a "\text{ " unit on the right cut off; " ." -> " 0.", "{." ->
//   "{0.", a leading "." gets a 0; "k = ..." with a left side of at most two characters keeps its
//   right side; \sqrt3 -> \sqrt{3}; spaces removed; \frac12 -> \frac{1}{2}; "0.5" -> \frac{1}{2};
//   "a/b" of two integers -> \frac{a}{b}.
// Where the Python code raises (an index past the end of a string, the assertion of the units
// step), PythonRaise is thrown, so that callers can take the graders' `except` branch.

/** The Python grader would raise here; its caller's `except` decides what that means. */
export class PythonRaise extends Error {}

/** Python's len() counts code points, not UTF-16 units. */
function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** \frac12 -> \frac{1}{2}, \frac1{72} -> \frac{1}{72}; a "\frac" with one character after it leaves the text unchanged. */
function fixFracs(text: string): string {
  const parts = text.split('\\frac');
  let out = parts[0]!;
  for (const part of parts.slice(1)) {
    out += '\\frac';
    if (part.length === 0) throw new PythonRaise('IndexError: "\\frac" at the end');
    if (part[0] === '{') {
      out += part;
      continue;
    }
    const chars = [...part];
    if (chars.length < 2) return text;
    const [a, b] = chars as [string, string];
    const rest = chars.slice(2).join('');
    out += b !== '{' ? `{${a}}{${b}}${rest}` : `{${a}}${b}${rest}`;
  }
  return out;
}

/** Python's str(int(x)) == x for the canonical spelling of an integer. */
const CANONICAL_INT_RE = /^(?:0|-?[1-9]\d*)$/;

/** "3/4" of two integers written plainly -> \frac{3}{4}; anything else unchanged. */
function fixASlashB(text: string): string {
  const parts = text.split('/');
  if (parts.length !== 2) return text;
  const [a, b] = parts as [string, string];
  // int() accepts more spellings ("+3", " 3", "03"), but the assertion that follows requires the canonical one.
  if (!CANONICAL_INT_RE.test(a) || !CANONICAL_INT_RE.test(b)) return text;
  return `\\frac{${a}}{${b}}`;
}

/** "10\text{ units}" -> "10": the MATH authors found "\text{ " (with the space) only before units. */
function removeRightUnits(text: string): string {
  if (!text.includes('\\text{ ')) return text;
  const parts = text.split('\\text{ ');
  if (parts.length !== 2) throw new PythonRaise('AssertionError: several "\\text{ " units');
  return parts[0]!;
}

/** \sqrt3 -> \sqrt{3} (one character). */
function fixSqrt(text: string): string {
  if (!text.includes('\\sqrt')) return text;
  const parts = text.split('\\sqrt');
  let out = parts[0]!;
  for (const part of parts.slice(1)) {
    if (part.length === 0) throw new PythonRaise('IndexError: "\\sqrt" at the end');
    if (part[0] !== '{') {
      const [a, ...rest] = [...part];
      out += `\\sqrt{${a}}${rest.join('')}`;
    } else out += `\\sqrt${part}`;
  }
  return out;
}

/** MATH's strip_string. Throws PythonRaise where the Python code raises. */
export function stripString(input: string): string {
  let s = input.replaceAll('\n', '');
  s = s.replaceAll('\\!', '');
  s = s.replaceAll('\\\\', '\\');
  s = s.replaceAll('tfrac', 'frac').replaceAll('dfrac', 'frac');
  s = s.replaceAll('\\left', '').replaceAll('\\right', '');
  s = s.replaceAll('^{\\circ}', '').replaceAll('^\\circ', '');
  s = s.replaceAll('\\$', '');
  s = removeRightUnits(s);
  // The graders remove "\%" (twice, as "\\%" and "\%", the same two characters); a bare "%" stays.
  s = s.replaceAll('\\%', '');
  s = s.replaceAll(' .', ' 0.').replaceAll('{.', '{0.');
  if (s.length === 0) return s;
  if (s[0] === '.') s = `0${s}`;
  const sides = s.split('=');
  if (sides.length === 2 && pyLen(sides[0]!) <= 2) s = sides[1]!;
  s = fixSqrt(s);
  s = s.replaceAll(' ', '');
  s = fixFracs(s);
  if (s === '0.5') s = '\\frac{1}{2}';
  return fixASlashB(s);
}

/** MATH's is_equiv: strip_string on both, then string equality; when that raises, the raw strings are compared. */
export function hendrycksIsEquiv(a: string | null, b: string | null): boolean {
  if (a === null && b === null) return true;
  if (a === null || b === null) return false;
  try {
    return stripString(a) === stripString(b);
  } catch (err) {
    if (err instanceof PythonRaise) return a === b;
    throw err;
  }
}

/**
 * PRM800K's and DeepScaleR's normalize_answer: trim, unwrap an answer that is entirely
 * "\text{...}", then strip_string; when that raises, the trimmed (unwrapped) answer.
 */
export function mathdNormalize(answer: string): string {
  let a = answer.trim();
  const m = /^\\text\{(.+?)\}$/.exec(a);
  if (m) a = m[1]!.trim();
  try {
    return stripString(a);
  } catch (err) {
    if (err instanceof PythonRaise) return a;
    throw err;
  }
}

/**
 * MATH's last_boxed_only_string: from the last "\boxed" (else the last "\fbox") to the "}" that
 * brings the brace count back to zero, counting from that point; null when there is none.
 */
export function lastBoxedOnlyString(text: string): string | null {
  let at = text.lastIndexOf('\\boxed');
  if (at < 0) at = text.lastIndexOf('\\fbox');
  if (at < 0) return null;
  let open = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '{') open++;
    if (c === '}') {
      open--;
      if (open === 0) return text.slice(at, i + 1);
    }
  }
  return null;
}

/** MATH's remove_boxed: the inside of "\boxed{...}"; null for anything else (an \fbox, "\boxed 5"). */
export function removeBoxed(s: string | null): string | null {
  const left = '\\boxed{';
  if (s === null || !s.startsWith(left) || !s.endsWith('}') || s.length < left.length + 1) return null;
  return s.slice(left.length, -1);
}

/** The content of a text's last \boxed{...} by MATH's two functions above; null when there is none. */
export function lastBoxedContent(text: string): string | null {
  return removeBoxed(lastBoxedOnlyString(text));
}
