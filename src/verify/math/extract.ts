// Final-answer extraction from a model's (or a worked solution's) text (spec section 3, "Maths answers").
//
// Order of preference, as the common graders do (Qwen2.5-Math / DeepSeek-Math `extract_answer`,
// Hugging Face math-verify): the last \boxed{...} / \fbox{...} (nested braces allowed; adjacent boxes
// of a multi-part answer are joined) or the last "The (final) answer is ...", whichever comes later;
// then the text after the last "####" (GSM8K and the Reasoner's marker); then the last math segment
// ($...$, \(...\), \[...\]); then the last number in the text.
//
// Linear in the text: the brace groups of the boxes are matched in one pass (BraceGroups), and the
// math segments are found by a scan that remembers where the next closing delimiter is, instead of
// searching the rest of the text again from every opening one ("\boxed{" or "\[" repeated
// 100,000 times without a close took seconds to minutes before).

/** Returns the content of the brace group that opens at `text[open]` ('{'), or null if unbalanced. */
export function readBraceGroup(text: string, open: number): { content: string; end: number } | null {
  if (text[open] !== '{') return null;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length && (text[i + 1] === '{' || text[i + 1] === '}')) {
      i++;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return { content: text.slice(open + 1, i), end: i + 1 };
    }
  }
  return null;
}

interface Span {
  content: string;
  start: number;
  end: number;
}

/**
 * readBraceGroup for every '{' of a text at once: for the '{' at i, closeAt[i] is the index of its
 * '}' (-1 when unbalanced), with readBraceGroup's rule that an escaped \{ or \} is not a brace.
 */
class BraceGroups {
  private readonly closeAt: Int32Array;

  constructor(text: string) {
    this.closeAt = new Int32Array(text.length).fill(-1);
    const open: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\\' && i + 1 < text.length && (text[i + 1] === '{' || text[i + 1] === '}')) i++;
      else if (c === '{') open.push(i);
      else if (c === '}' && open.length > 0) this.closeAt[open.pop()!] = i;
    }
  }

  /** As readBraceGroup(text, open) for a '{' at `open` that follows no backslash. */
  read(text: string, open: number): { content: string; end: number } | null {
    const close = this.closeAt[open]!;
    return close < 0 ? null : { content: text.slice(open + 1, close), end: close + 1 };
  }
}

/**
 * The boxes of a text, outermost only: a box inside another box is part of that box's content, not
 * a further part of the answer (joining it as one made "\boxed{\boxed{1}}" read "\boxed{1}, 1", and
 * 100,000 nested boxes a text of 10^10 characters).
 */
function boxedSpans(text: string): Span[] {
  const re = /\\(?:boxed|fbox)\s*/g;
  const spans: Span[] = [];
  let groups: BraceGroups | null = null;
  // The run of characters other than whitespace and '$' last measured: a `\boxed 5` argument inside it ends where it ends.
  let runStart = -1;
  let runEnd = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (spans.length > 0 && m.index < spans[spans.length - 1]!.end) continue;
    const start = m.index + m[0].length;
    if (text[start] === '{') {
      // The box's '{' follows "boxed" or a space, never a backslash, so the one-pass matching applies.
      groups ??= new BraceGroups(text);
      const group = groups.read(text, start);
      if (group) spans.push({ content: group.content, start: m.index, end: group.end });
    } else {
      // `\boxed 5` (no braces): the argument is the following token, up to a space, '$' or end.
      if (!(start >= runStart && start < runEnd)) {
        runStart = start;
        runEnd = start;
        while (runEnd < text.length && !/[\s$]/.test(text[runEnd]!)) runEnd++;
      }
      if (runEnd > start) spans.push({ content: text.slice(start, runEnd), start: m.index, end: runEnd });
    }
  }
  return spans;
}

// What may separate the parts of one multi-part answer: "\boxed{1} and \boxed{2}", "$1$, $2$ or $3$",
// "\boxed{(2,2)} \quad \text{and} \quad \boxed{(6,2)}", "\boxed{1} papers and \boxed{2}", "\) and \( y_2 = ".
const PART_GAP_RE = /^(?:[\s,;$]|\\[()[\]]|\\q?quad|\\[,;: ]|\\text\{[^{}]{0,30}\}|\b(?:and|or|for|part)\b|\([a-z]\)|[a-z]\w{0,3}(?:_\{?\w+\}?)?\s*=|[a-z]{1,12})*$/i;

function isPartGap(gap: string): boolean {
  if (gap.length > 40 || !PART_GAP_RE.test(gap)) return false;
  // At most two plain words ("papers and"), so that prose between two results does not join them.
  return (gap.replace(/\\text\{[^{}]*\}|\\[a-z]+|\b(?:and|or)\b/gi, '').match(/[a-z]{2,}/gi) ?? []).length <= 1;
}

/** Joins the trailing spans that are separated only by part gaps. */
function joinTrailing(text: string, spans: Span[]): { content: string; end: number } | null {
  if (spans.length === 0) return null;
  let first = spans.length - 1;
  while (first > 0 && isPartGap(text.slice(spans[first - 1]!.end, spans[first]!.start))) first--;
  return { content: spans.slice(first).map((s) => s.content.trim()).join(', '), end: spans[spans.length - 1]!.end };
}

/** Content of the last \boxed{...} / \fbox{...} (adjacent boxes joined with ", "), or null. */
export function extractBoxed(text: string): string | null {
  return joinTrailing(text, boxedSpans(text))?.content ?? null;
}

/** Text after the last "####" marker, up to the end of that line, or null. */
export function extractAfterHashes(text: string): string | null {
  const at = text.lastIndexOf('####');
  if (at < 0) return null;
  const rest = text.slice(at + 4).split('\n').find((line) => line.trim() !== '');
  return rest === undefined ? null : rest.trim();
}

const ANSWER_IS_RE = /(?:final answer|the answer)\s*(?:is|:)\s*:?\s*/gi;

/**
 * The first index >= from where `find` succeeds, for queries whose `from` never decreases: a
 * query inside the stretch the previous one searched gets the previous answer without a search.
 */
function forwardSearch(find: (from: number) => number): (from: number) => number {
  let searchedFrom = Infinity;
  let found = -1;
  return (from) => {
    if (from >= searchedFrom && (found < 0 || from <= found)) return found;
    searchedFrom = from;
    found = find(from);
    return found;
  };
}

/**
 * The segments $$..$$, \[..\], \(..\) (on one line) and $..$ (on one line; \$ inside is a
 * dollar, a closing $ follows no backslash), leftmost first, as the global regular expression
 * /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([^\n]+?)\\\)|(?<!\\)\$((?:\\\$|[^$\n])+?)(?<!\\)\$/g
 * finds them, but without searching the rest of the text again from every unclosed opening.
 */
function mathSpans(text: string): Span[] {
  const out: Span[] = [];
  const nextDoubleDollar = forwardSearch((from) => text.indexOf('$$', from));
  const nextDisplayClose = forwardSearch((from) => text.indexOf('\\]', from));
  const nextInlineClose = forwardSearch((from) => text.indexOf('\\)', from));
  const nextNewline = forwardSearch((from) => text.indexOf('\n', from));
  const nextNewlineAfterDollar = forwardSearch((from) => text.indexOf('\n', from));
  const nextClosingDollar = forwardSearch((from) => {
    for (let q = text.indexOf('$', from); q >= 0; q = text.indexOf('$', q + 1)) if (text[q - 1] !== '\\') return q;
    return -1;
  });
  const push = (contentStart: number, contentEnd: number, start: number, end: number): number => {
    const seg = text.slice(contentStart, contentEnd).trim();
    if (seg !== '') out.push({ content: seg, start, end });
    return end;
  };
  let p = 0;
  while (p < text.length) {
    const c = text[p];
    let end = -1;
    if (c === '$' && text[p + 1] === '$') {
      const q = nextDoubleDollar(p + 3);
      if (q >= 0) end = push(p + 2, q, p, q + 2);
    } else if (c === '\\' && text[p + 1] === '[') {
      const q = nextDisplayClose(p + 3);
      if (q >= 0) end = push(p + 2, q, p, q + 2);
    } else if (c === '\\' && text[p + 1] === '(') {
      const q = nextInlineClose(p + 3);
      const newline = nextNewline(p + 2);
      if (q >= 0 && (newline < 0 || newline >= q)) end = push(p + 2, q, p, q + 2);
    }
    if (end < 0 && c === '$' && text[p - 1] !== '\\') {
      const q = nextClosingDollar(p + 1);
      const newline = nextNewlineAfterDollar(p + 1);
      if (q >= p + 2 && (newline < 0 || newline >= q)) end = push(p + 1, q, p, q + 1);
    }
    p = end >= 0 ? end : p + 1;
  }
  return out;
}

/** Math segments of a text: $$..$$, $..$, \[..\], \(..\), in order of appearance. */
export function mathSegments(text: string): string[] {
  return mathSpans(text).map((s) => s.content);
}

/** The sentence that starts at `from`: up to a full stop followed by a space or the end, or a newline, skipping math. */
function sentenceFrom(text: string, from: number): string {
  let inMath = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '$' && text[i - 1] !== '\\') inMath = !inMath;
    else if (!inMath && (ch === '\n' || (ch === '.' && (i + 1 === text.length || /\s/.test(text[i + 1]!))))) return text.slice(from, i);
  }
  return text.slice(from);
}

function lastAnswerIsMatch(text: string): RegExpExecArray | null {
  let match: RegExpExecArray | null = null;
  for (let m = ANSWER_IS_RE.exec(text); m; m = ANSWER_IS_RE.exec(text)) match = m;
  ANSWER_IS_RE.lastIndex = 0;
  return match;
}

/**
 * The answer stated after the last "The (final) answer is" / "Final Answer:", or null. Inside that
 * sentence: what follows its last " is " when no math comes after it, else its last math segment(s),
 * else its last number, else the sentence.
 */
export function extractAnswerIs(text: string): string | null {
  const match = lastAnswerIsMatch(text);
  if (!match) return null;
  let sentence = sentenceFrom(text, match.index + match[0].length).trim();
  const is = sentence.toLowerCase().lastIndexOf(' is ');
  const spans = mathSpans(sentence);
  if (is >= 0 && (spans.length === 0 || spans[spans.length - 1]!.end <= is)) sentence = sentence.slice(is + 4).trim();
  const inner = mathSpans(sentence);
  let answer = inner.length > 0 ? joinTrailing(sentence, inner)!.content : sentence;
  if (inner.length === 0 && /[a-z]{3,}.*\s/i.test(sentence)) answer = extractLastNumber(sentence) ?? sentence;
  answer = answer.replace(/^\$+|\$+$/g, '').replace(/^["']|["']$/g, '').trim();
  return answer === '' ? null : answer;
}

const NOT_PROSE = new Set(['and', 'the', 'units', 'unit', 'degrees', 'radians', 'percent', 'percentage', 'pct', 'cm', 'meters', 'inches', 'feet', 'miles', 'hours', 'minutes', 'seconds', 'days', 'dollars', 'cents', 'sqrt', 'frac', 'pi', 'infty']);

/** True when a text is an answer by itself rather than prose around one (few words, no inner $...$). */
export function isBareAnswer(text: string): boolean {
  const t = text.trim();
  if (lastAnswerIsMatch(t)) return false;
  const unwrapped = t.replace(/^\$+|\$+$/g, '').replace(/^\\[[(]|\\[\])]$/g, '');
  if (/\$|\\\(|\\\[/.test(unwrapped.replace(/\\\$/g, ''))) return false;
  if (/\n/.test(unwrapped.trim())) return false;
  // Words outside LaTeX commands, other than "and"/"or" and unit words: prose around a number.
  const words = (unwrapped.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, ' ').match(/[A-Za-z]{3,}/g) ?? []).filter((w) => !NOT_PROSE.has(w.toLowerCase()));
  return words.length === 0 || (!/\d/.test(unwrapped) && words.length <= 3);
}

const NUMBER_RE = /(?<![A-Za-z\d])(?:-?\d[\d,]*(?:\.\d+)?(?:\/\d+)?|-?\.\d+)/g;

/** The last number in the text (integers, decimals, simple a/b fractions, 1,234 separators), or null. */
export function extractLastNumber(text: string): string | null {
  const all = text.match(NUMBER_RE);
  if (!all) return null;
  return all[all.length - 1]!.replace(/,$/, '');
}

export type ExtractionSource = 'boxed' | 'answer_is' | 'hashes' | 'last_math' | 'last_number';

/** The final answer of a response and where it came from; null when the text holds none. */
export function extractAnswerWithSource(text: string): { answer: string; source: ExtractionSource } | null {
  const boxed = joinTrailing(text, boxedSpans(text));
  const answerIsAt = lastAnswerIsMatch(text)?.index ?? -1;
  const answerIs = answerIsAt >= 0 ? extractAnswerIs(text) : null;
  // A "final answer is" sentence after the last box restates (or corrects) it: the later one counts.
  if (boxed !== null && !(answerIs !== null && answerIsAt > boxed.end)) return { answer: boxed.content, source: 'boxed' };
  if (answerIs !== null) return { answer: answerIs, source: 'answer_is' };
  const hashes = extractAfterHashes(text);
  if (hashes !== null) return { answer: hashes, source: 'hashes' };
  const segments = joinTrailing(text, mathSpans(text));
  if (segments !== null) return { answer: segments.content, source: 'last_math' };
  // Math delimiters that enclose no well-formed segment (e.g. an inline $...$ broken across lines):
  // the text's numbers are not a stated answer.
  if ((text.match(/(?<!\\)\$/g) ?? []).length >= 2 || /\\\(/.test(text)) return null;
  const last = extractLastNumber(text);
  if (last !== null) return { answer: last, source: 'last_number' };
  return null;
}

/** The final answer of a response, or null. */
export function extractAnswer(text: string): string | null {
  return extractAnswerWithSource(text)?.answer ?? null;
}
