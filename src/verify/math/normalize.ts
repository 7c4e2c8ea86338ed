// String normalisation of a final answer before any parsing (spec section 3: "string normalisation").
//
// Follows the rules shared by the Hendrycks MATH `strip_string`, the Qwen2.5-Math grader and
// math-verify: spacing commands, \left/\right, \dfrac/\tfrac, dollar signs, degrees, thousands
// separators, unit words and \text{...} wrappers, trailing full stops. Percent signs are removed but
// remembered, because "50\%" may be compared with 0.5 (see equal.ts).

export interface NormalizedAnswer {
  /** LaTeX-ish text ready for structure splitting and parsing. */
  text: string;
  /** The answer carried a percent sign. */
  percent: boolean;
}

/** Replaces `\cmd{arg}` by `arg` for the given wrapper commands (nested braces allowed). */
function unwrapCommands(s: string, commands: string[]): string {
  const re = new RegExp(`\\\\(?:${commands.join('|')})\\s*\\{`, 'g');
  for (let guard = 0; guard < 50; guard++) {
    re.lastIndex = 0;
    const m = re.exec(s);
    if (!m) break;
    const open = m.index + m[0].length - 1;
    let depth = 0;
    let close = -1;
    for (let i = open; i < s.length; i++) {
      if (s[i] === '{') depth++;
      else if (s[i] === '}' && --depth === 0) {
        close = i;
        break;
      }
    }
    if (close < 0) break;
    s = s.slice(0, m.index) + s.slice(open + 1, close) + s.slice(close + 1);
  }
  return s;
}

// Units and other words that follow a number and carry no value.
const UNIT_WORDS = [
  'square units', 'square feet', 'square inches', 'square meters', 'square centimeters', 'sq units', 'cubic feet', 'cubic inches',
  'cubic units', 'cubic centimeters', 'units', 'unit', 'degrees', 'degree', 'cm', 'mm', 'km', 'meters', 'meter', 'm', 'inches', 'inch',
  'feet', 'foot', 'ft', 'miles', 'mile', 'mph', 'hours', 'hour', 'minutes', 'minute', 'seconds', 'second', 'days', 'day', 'weeks',
  'years', 'dollars', 'dollar', 'cents', 'cent', 'pounds', 'ounces', 'gallons', 'liters', 'kg', 'grams', 'g', 'people', 'students',
  'ways', 'sq', 'cups', 'pages', 'apples', 'marbles', 'coins', 'points', 'times', 'percent',
];
const NUMBER_THEN_UNIT_RE = new RegExp(`^(-?[\\d.,]+(?:\\s*\\\\?%)?)\\s*(?:${UNIT_WORDS.join('|')})(?:\\^?\\{?[23]\\}?)?\\.?$`, 'i');

const SPACING_RE = /(?<!\\)\\[,;:!>]|\\q?quad|\\(?:h|v)space\*?\{[^}]*\}|~/g;
const SPACING_WITHOUT_HSPACE_RE = /(?<!\\)\\[,;:!>]|\\q?quad|~/g;

/** True when the text is a plain number with thousands separators, e.g. 1,234,567.5 */
const THOUSANDS_RE = /^-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$/;

export function normalizeAnswer(raw: string): NormalizedAnswer {
  let s = raw.trim();
  // Doubly escaped commands ("\\frac" from a JSON or Python string written twice) → "\frac".
  s = s.replace(/(?<!\\)\\\\(?=[a-zA-Z])/g, '\\');
  // Outer math delimiters and display wrappers.
  s = s.replace(/^\$+|\$+$/g, '').replace(/^\\\(|\\\)$/g, '').replace(/^\\\[|\\\]$/g, '');
  s = s.replace(/\\displaystyle|\\limits/g, '');
  // Thousands separators written with LaTeX spacing or braces: 14{,}916, 11,\!111, 14 {, }916.
  s = s.replace(/(\d)\s*\{\s*,\s*\}\s*(?=\d{3}(?!\d))/g, '$1,').replace(/(\d),\\!\s*(?=\d{3}(?!\d))/g, '$1,');
  // Spacing commands and tildes; "\ " (control space). An \hspace{..} needs a "}" after it, so the
  // part after the last "}" is replaced without that alternative: each unclosed "\hspace{" there
  // would search the rest of the text again (quadratic time) only to fail.
  const lastClose = s.lastIndexOf('}') + 1;
  s = (s.slice(0, lastClose).replace(SPACING_RE, ' ') + s.slice(lastClose).replace(SPACING_WITHOUT_HSPACE_RE, ' ')).replace(/(?<!\\)\\ /g, ' ');
  s = s.replace(/\\left(?![a-z])|\\right(?![a-z])|\\bigg?[lr]?(?![a-z])|\\Bigg?[lr]?(?![a-z])/g, '');
  s = s.replace(/\\[dtc]frac/g, '\\frac').replace(/\\dbinom|\\tbinom/g, '\\binom');
  // Malformed short fractions and roots: \frac12, \frac3{3}, \frac{1}2.
  s = s.replace(/\\frac\s*(\d)\s*(\d)/g, '\\frac{$1}{$2}').replace(/\\frac\s*(\d)\s*\{/g, '\\frac{$1}{').replace(/\\frac\s*(\{[^{}]*\})\s*(\d)/g, '\\frac$1{$2}');
  s = s.replace(/\\sqrt\s*(\d+)/g, '\\sqrt{$1}');
  s = s.replace(/\\mathbf|\\boldsymbol|\\mathrm|\\textbf|\\textit|\\mathit/g, '\\text');
  // Dollar signs anywhere (currency), degree marks.
  s = s.replace(/\\\$/g, '').replace(/\$/g, '');
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree/g, '');
  // Relations written in ASCII or LaTeX: one spelling each.
  s = s.replace(/\\neq?(?![a-z])|≠/g, '!=').replace(/\\leq?(?![a-z])|\\leqslant|≤/g, '<=').replace(/\\geq?(?![a-z])|\\geqslant|≥/g, '>=');
  s = s.replace(/\\lt(?![a-z])/g, '<').replace(/\\gt(?![a-z])/g, '>');
  // Percent: remember and remove (also the words percent, percentage, pct).
  let percent = false;
  if (/\\?%|\b(?:percent(?:age)?|pct)\b/.test(s)) {
    percent = true;
    s = s.replace(/\\?%|\s*\b(?:percent(?:age)?|pct)\b/g, '');
  }
  // "1 \text{ and } 2", "x=1 or x=2", "(11,7)or(7,11)": several answers, separated like a list. A match
  // starts where a run of spaces starts (what the leftmost match does anyway), so that a long run
  // is not searched again from each of its spaces.
  s = s.replace(/\\(?:text|mbox)\s*\{\s*(?:and|or)\s*\}/g, ',').replace(/(?<!\s)\s+(?:and|or)\s+/g, ',').replace(/([)\]}])\s*(?:and|or)\s*(?=[([{])/g, '$1,');
  // A "\text{...}" that holds a unit after a value is dropped; a text-only answer keeps its words.
  const withoutText = s.replace(/\\(?:text|mbox)\s*\{[^{}]*\}(?:\^\s*\{?[23]\}?)?/g, '').trim();
  if (withoutText !== '' && /[\d\\]/.test(withoutText) && !/^[,;=]|[,;=]$/.test(withoutText)) s = withoutText;
  s = unwrapCommands(s, ['text', 'mbox', 'textrm', 'textnormal']);
  s = s.replace(/\s+/g, ' ').trim();
  // Trailing full stop (not a decimal point) and unit words after a number (per item of a list).
  s = s.replace(/\s*\.$/, '').trim();
  s = s.split(/(\s*,\s*)/).map((item, i) => (i % 2 === 0 ? NUMBER_THEN_UNIT_RE.exec(item)?.[1]?.trim() ?? item : item)).join('');
  s = s.replace(/(\d)\s*(?:m|cm|km|mm)(?:²|\^2|\^\{2\})$/, '$1').replace(/(\d)\s*[€£¥]$/, '$1');
  // Thousands separators: 1,234 / 1 234.
  if (/^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/ /g, '');
  if (THOUSANDS_RE.test(s)) s = s.replace(/,/g, '');
  // ".5" must parse as 0.5.
  s = s.replace(/(^|[^\d])\.(\d)/g, '$10.$2');
  return { text: s, percent };
}

/** "1000,99" / "0,111" written with a decimal comma → "1000.99" / "0.111"; null when the text is not such a number. */
export function decimalCommaVariant(s: string): string | null {
  const m = /^(-?\d+),(\d+)$/.exec(s.trim());
  return m ? `${m[1]}.${m[2]}` : null;
}

/** A comparison key for answers that are words or choice letters: lower case, no spaces or braces. */
export function textKey(s: string): string {
  let k = s.toLowerCase().replace(/\\text\{([^{}]*)\}/g, '$1').replace(/[\s{}]/g, '');
  const choice = /^\(?([a-e])\)?$/.exec(k);
  if (choice) k = choice[1]!;
  return k;
}
