// AMC 2023 as the Qwen2.5-Math evaluation scores it (QwenLM/Qwen2.5-Math, evaluation/grader.py
// `math_equal`), the source of the bundled file; its 40 answers are numbers (stored as floats: 27.0).
//
// Extraction: that harness's order (parser.py extract_answer): the last \boxed{}, else "the answer
// is ...", else the last number - the same order as marft's own extraction (extract.ts), used here.
// Equivalence, numeric as the answers are:
//   - the lower-cased strings are equal; or
//   - both are plain numbers (commas dropped; "25%" is 0.25): the answer is within relative 1e-4
//     of the reference, of the reference / 100 or of the reference × 100 (so 0.27 and 2700 both
//     count for 27: the harness's include_percentage); or
//   - both are constant expressions ("\frac{27}{1}", "3\sqrt{2}") whose values are within
//     relative 1e-4 (its symbolic_equal falls back to comparing N(a) with N(b)).
// Variables, tuples and sets are not AMC answers: they are unequal unless written identically.
import { extractAnswer } from '../extract.ts';
import { normalizeAnswer } from '../normalize.ts';
import { constantValue } from '../expression.ts';
import type { BenchmarkScorer } from './types.ts';

/** The harness's parse_digits: a float after dropping commas, or "N%" as N/100; null otherwise. */
function parseDigits(s: string): number | null {
  const t = s.replaceAll(',', '').trim();
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return Number(t);
  const pct = /^([+-]?(?:\d+\.?\d*|\.\d+))\\?%$/.exec(t);
  return pct ? Number(pct[1]) / 100 : null;
}

/** Python's math.isclose(a, b, rel_tol=1e-4). */
function isClose(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-4 * Math.max(Math.abs(a), Math.abs(b));
}

/** The value of an answer once normalised, or null when it has none. */
function answerValue(s: string): number | null {
  return constantValue(normalizeAnswer(s).text);
}

export const amc23Scorer: BenchmarkScorer = {
  name: 'amc23',
  describe: 'QwenLM/Qwen2.5-Math math_equal: numeric, relative 1e-4, percent variants',
  reference: (gold) => (/\\boxed|####/.test(gold) ? extractAnswer(gold) : gold),
  extract: (response) => extractAnswer(response),
  equal: (reference, answer) => {
    if (reference.trim().toLowerCase() === answer.trim().toLowerCase()) return true;
    const r = parseDigits(reference);
    const a = parseDigits(answer);
    if (r !== null && a !== null) return [r / 100, r, r * 100].some((x) => isClose(a, x));
    const rv = r ?? answerValue(reference);
    const av = a ?? answerValue(answer);
    return rv !== null && av !== null && isClose(rv, av);
  },
};
