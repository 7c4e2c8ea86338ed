// AIME (2024, 2025) as MathArena scores it (eth-sri/matharena, src/matharena/parser.py:
// extract_answer with strict parsing, parse_answer, check_answers), the source of the bundled
// AIME files. Every AIME answer is an integer from 0 to 999.
//
// Extraction: the last \boxed{...} or \fbox{...} (nested braces allowed; a box inside it is
// unwrapped). Strict parsing: a response without a box has no answer (no last-number fallback).
// Reading the box: an integer literal as it is ("033" is 33); otherwise MathArena's normalisation
// - \left/\right, "$", \text{...} (with its contents), "\," "\;" "\!" removed, \mathrm{x} -> x,
// "1,000" -> 1000, a trailing "." dropped, only the part after the last "=" and before "\approx"
// kept - and the expression's value (\frac{66}{2} is 33).
// Equivalence: the reference integer against that value, |a − b| < 1e-10 (so 33.0 counts, 33.5 not).
import { constantValue } from '../expression.ts';
import type { BenchmarkScorer } from './types.ts';

/** The contents of the last \boxed{..} / \fbox{..}, with any box inside it unwrapped; null when there is none. */
export function lastBoxAnyKind(text: string): string | null {
  const re = /\\?(?:boxed|fbox)\{/g;
  let last: string | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}') depth--;
    }
    if (depth === 0) last = text.slice(m.index + m[0].length, i - 1);
  }
  return last === null ? null : unwrapBoxes(last);
}

function unwrapBoxes(s: string): string {
  for (let guard = 0; guard < 20; guard++) {
    const inner = /\\(?:boxed|fbox)\{/.exec(s);
    if (!inner) return s;
    let depth = 1;
    let i = inner.index + inner[0].length;
    for (; i < s.length && depth > 0; i++) {
      if (s[i] === '{') depth++;
      else if (s[i] === '}') depth--;
    }
    if (depth !== 0) return s;
    s = s.slice(0, inner.index) + s.slice(inner.index + inner[0].length, i - 1) + s.slice(i);
  }
  return s;
}

/** MathArena's normalize_string, for a single (not list) answer. */
function normalizeMatharena(input: string): string {
  let s = input.replace(/\\[;:,!]/g, '');
  s = s.replaceAll('\\left', '').replaceAll('\\right', '').replace(/\\[Bb]ig[lr]?/g, '');
  s = s.replaceAll('$', '').replaceAll('\\quad', ' ').replaceAll('−', '-');
  s = s.replaceAll('^\\circ', ' ').replaceAll('^{\\circ}', ' ').replaceAll('\\displaystyle', '');
  if (s.endsWith('.')) s = s.slice(0, -1);
  s = s.replace(/(\d+),(\d+)/g, '$1$2');
  s = s.replace(/\\text\{.*?\}/g, '');
  s = s.replace(/\\mathrm\{(.*?)\}/g, ' $1 ');
  if (s.includes('=')) s = s.split('=').at(-1)!;
  if (s.includes('\\approx')) s = s.split('\\approx')[0]!;
  return s.trim();
}

/** The value a box stands for: an integer literal, else the normalised expression's value; null when it has none. */
function boxValue(box: string): number | bigint | null {
  const t = box.trim();
  if (/^[+-]?\d+$/.test(t)) return BigInt(t);
  const s = normalizeMatharena(t);
  if (/^[+-]?\d+$/.test(s)) return BigInt(s);
  return constantValue(s);
}

export const aimeScorer: BenchmarkScorer = {
  name: 'aime',
  describe: 'eth-sri/matharena: last \\boxed{} only, its integer value against the answer',
  reference: (gold) => {
    const g = lastBoxAnyKind(gold) ?? gold;
    return /^\s*[+-]?\d+\s*$/.test(g) ? g.trim() : null;
  },
  extract: (response) => lastBoxAnyKind(response),
  equal: (reference, answer) => {
    if (!/^[+-]?\d+$/.test(reference.trim())) return false;
    const gold = BigInt(reference.trim());
    const v = boxValue(answer);
    if (v === null) return false;
    if (typeof v === 'bigint') return v === gold;
    return Math.abs(v - Number(gold)) < 1e-10;
  },
};
