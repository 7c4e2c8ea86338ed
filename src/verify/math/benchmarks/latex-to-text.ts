// LaTeX to plain text as PRM800K's grader sees it. openai/prm800k grading/grader.py (and
// DeepScaleR's copy of it) pass any answer holding a backslash through pylatexenc 2's
// LatexNodes2Text before handing it to sympy, so the grader's verdicts depend on that rendering:
//   \frac{a}{b} -> "a/b" with no parentheses ("\frac{1+\sqrt5}{2}" reads 1 + sqrt(5)/2 there),
//   \sqrt{x} -> "√(x)", Greek letters and \infty, \cdot, \times, \pm, \cup -> their Unicode
//   characters, \text{..} / \mathrm{..} / \mathbf{..} -> their contents, braces dropped, spacing
//   commands -> spaces, "\!" -> nothing, "\\" -> a line break, "~" -> a space, an unknown macro ->
//   nothing (its braced arguments stay as text), environments -> their contents.
// This module reproduces that rendering for the macros that occur in competition answers (written
// from pylatexenc 2's documented defaults, not its code). Unbalanced braces throw: pylatexenc
// raises on them and the grader then keeps the LaTeX as it was.

const GREEK = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu', 'nu', 'xi', 'omicron', 'pi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'chi', 'psi', 'omega'];
const GREEK_SMALL = 'αβγδϵζηθικλμνξοπρστυϕχψω';
const GREEK_CAPITAL = 'ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ';

/** Macros without arguments and their text. */
const SYMBOLS: Record<string, string> = {
  infty: '∞',
  cdot: '·',
  times: '×',
  pm: '±',
  mp: '∓',
  cup: '∪',
  cap: '∩',
  circ: '∘',
  le: '<',
  ge: '>',
  leq: '≤',
  geq: '≥',
  leqslant: '≤',
  geqslant: '≥',
  neq: '≠',
  approx: '≈',
  sim: '∼',
  equiv: '≡',
  in: '∈',
  notin: '∉',
  subset: '⊂',
  subseteq: '⊆',
  setminus: '∖',
  emptyset: '∅',
  varnothing: '∅',
  partial: '∂',
  nabla: '∇',
  sum: '∑',
  prod: '∏',
  int: '∫',
  to: '→',
  rightarrow: '→',
  leftarrow: '←',
  ldots: '...',
  cdots: '...',
  dots: '...',
  ddots: '...',
  prime: "'",
  hbar: 'ħ',
  ell: 'ℓ',
  langle: '⟨',
  rangle: '⟩',
  mid: '|',
  quad: '  ',
  qquad: '    ',
  cos: 'cos',
  sin: 'sin',
  tan: 'tan',
  sec: 'sec',
  csc: 'csc',
  cot: 'cot',
  arccos: 'arccos',
  arcsin: 'arcsin',
  arctan: 'arctan',
  ln: 'ln',
  log: 'log',
  exp: 'exp',
  max: 'max',
  min: 'min',
  gcd: 'gcd',
  det: 'det',
  varepsilon: 'ε',
  vartheta: 'ϑ',
  varphi: 'φ',
  varpi: 'ϖ',
  varrho: 'ϱ',
  varsigma: 'ς',
};
GREEK.forEach((name, i) => {
  SYMBOLS[name] = GREEK_SMALL[i]!;
  SYMBOLS[name[0]!.toUpperCase() + name.slice(1)] = GREEK_CAPITAL[i]!;
});

/** Escaped characters (a backslash and one non-letter). */
const ESCAPES: Record<string, string> = { ',': ' ', ';': ' ', ':': ' ', ' ': ' ', '!': '', '{': '{', '}': '}', $: '$', '%': '%', '&': '&', '#': '#', _: '_', '\\': '\n' };

/** Macros whose one braced argument is rendered as it is (font, text and accent commands). */
const CONTENT_MACROS = new Set([
  'text', 'textrm', 'textbf', 'textit', 'textsf', 'texttt', 'textnormal', 'emph', 'mbox', 'mathrm', 'mathbf', 'mathit', 'mathsf', 'mathtt',
  'mathcal', 'mathbb', 'mathfrak', 'boldsymbol', 'operatorname', 'overline', 'underline', 'hat', 'bar', 'vec', 'tilde', 'widehat', 'widetilde', 'dot', 'ddot',
]);

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  skipSpaces(): void {
    while (!this.done && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  /** A macro name after a backslash: a run of letters, or one other character. */
  macroName(): string {
    const m = /^[a-zA-Z]+/.exec(this.text.slice(this.pos));
    const name = m ? m[0] : (this.text[this.pos] ?? '');
    this.pos += name.length;
    return name;
  }

  /** The raw text of the braced group opening here; throws on an unclosed group. */
  group(): string {
    let depth = 0;
    const start = this.pos;
    for (; this.pos < this.text.length; this.pos++) {
      const c = this.text[this.pos];
      if (c === '\\') {
        this.pos++;
        continue;
      }
      if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        this.pos++;
        return this.text.slice(start + 1, this.pos - 1);
      }
    }
    throw new Error('unclosed brace group');
  }

  /** One macro argument: a braced group, a macro, or one character. */
  argument(): string {
    this.skipSpaces();
    if (this.text[this.pos] === '{') return this.group();
    if (this.text[this.pos] === '\\') {
      const start = this.pos++;
      this.macroName();
      return this.text.slice(start, this.pos);
    }
    return this.text[this.pos++] ?? '';
  }

  /** An optional [..] argument, or null. */
  optional(): string | null {
    this.skipSpaces();
    if (this.text[this.pos] !== '[') return null;
    const close = this.text.indexOf(']', this.pos);
    if (close < 0) return null;
    const inside = this.text.slice(this.pos + 1, close);
    this.pos = close + 1;
    return inside;
  }
}

function render(text: string): string {
  const r = new Reader(text);
  let out = '';
  while (!r.done) {
    const c = text[r.pos]!;
    if (c === '{') {
      out += render(r.group());
      continue;
    }
    if (c === '}') throw new Error('unbalanced "}"');
    if (c !== '\\') {
      // An alignment "&" is rendered as spaces ("\&" is an ampersand, below).
      out += c === '&' ? '   ' : c;
      r.pos++;
      continue;
    }
    r.pos++;
    const name = r.macroName();
    if (name in ESCAPES) out += ESCAPES[name]!;
    else if (name === 'frac' || name === 'nicefrac' || name === 'dfrac' || name === 'tfrac') {
      const num = render(r.argument());
      const den = render(r.argument());
      out += `${num}/${den}`;
    } else if (name === 'sqrt') {
      r.optional();
      out += `√(${render(r.argument())})`;
    } else if (CONTENT_MACROS.has(name)) out += render(r.argument());
    else if (name === 'begin' || name === 'end') r.argument();
    else if (name in SYMBOLS) out += SYMBOLS[name]!;
    // \left, \right, \big.. and unknown macros render as nothing; what follows them stays.
  }
  return out;
}

/** pylatexenc 2's text for a LaTeX answer, with its final replacements ("~" -> a space, quotes). Throws on unbalanced braces. */
export function latexToText(latex: string): string {
  return render(latex).replaceAll('~', ' ').replaceAll('``', '"').replaceAll("''", '"');
}
