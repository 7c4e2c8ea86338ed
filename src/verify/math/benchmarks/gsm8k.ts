// GSM8K (Cobbe et al. 2021) as its authors score it: openai/grade-school-math,
// grade_school_math/dataset.py `extract_answer` / `is_correct`.
//
// Extraction: the first "#### " followed by a number (the authors' pattern "#### (\-?[0-9\.\,]+)"),
// commas removed. The authors score a completion without that marker as invalid; most GSM8K
// evaluations of chat models (lm-evaluation-harness's "flexible-extract", Qwen2.5-Math's) take the
// last number of the text instead, and so does this scorer when there is no marker.
// Equivalence: exact, on the numbers read by that same rule (so an answer another reader already
// extracted, "$18" or "18.", is its number). The authors compare the two strings; here the two
// numerals are compared as exact decimal values, so a trailing ".00" does not matter (GSM8K's
// references are integers), but there is no tolerance, no unit, no fraction and no expression:
// 18 is not 18.0001, and "\frac{36}{2}" holds the numbers 36 and 2, not 18.
import type { BenchmarkScorer } from './types.ts';

const HASH_ANSWER_RE = /#### (-?[0-9.,]+)/;
const NUMBER_RE = /-?\d[\d,]*(?:\.\d+)?|-?\.\d+/g;

function hashAnswer(text: string): string | null {
  const m = HASH_ANSWER_RE.exec(text);
  return m ? m[1]!.trim().replaceAll(',', '') : null;
}

function lastNumber(text: string): string | null {
  const all = text.match(NUMBER_RE);
  return all ? all[all.length - 1]!.replaceAll(',', '') : null;
}

/** A decimal numeral as [sign, digits without leading zeros, fraction without trailing zeros]; null for anything else. */
function exactDecimal(s: string): string | null {
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(s.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const whole = m[2]!.replace(/^0+(?=\d)/, '') || '0';
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  const zero = /^0*$/.test(whole) && fraction === '';
  return `${zero ? '' : m[1]}${whole}${fraction ? `.${fraction}` : ''}`;
}

export const gsm8kScorer: BenchmarkScorer = {
  name: 'gsm8k',
  describe: 'openai/grade-school-math: the "#### N" answer (else the last number), exact',
  reference: (gold) => hashAnswer(gold) ?? lastNumber(gold),
  extract: (response) => hashAnswer(response) ?? lastNumber(response),
  equal: (reference, answer) => {
    // Both sides are read by the same rule again, so that an answer another reader extracted ("$18", "18.") is its number.
    const r = hashAnswer(reference) ?? lastNumber(reference);
    const n = hashAnswer(answer) ?? lastNumber(answer);
    const a = r === null ? null : exactDecimal(r);
    return a !== null && n !== null && a === exactDecimal(n);
  },
};
