// The answer extraction as it was before its scans were made linear (commit 77d8fd8): kept only as
// the oracle that test/verify/math-extract.test.ts compares src/verify/math/extract.ts with.
//
// Final-answer extraction from a model's (or a worked solution's) text (spec section 3, "Maths answers").
//
// Order of preference, as the common graders do (Qwen2.5-Math / DeepSeek-Math `extract_answer`,
// Hugging Face math-verify): the last \boxed{...} / \fbox{...} (nested braces allowed; adjacent boxes
// of a multi-part answer are joined) or the last "The (final) answer is ...", whichever comes later;
// then the text after the last "####" (GSM8K and the Reasoner's marker); then the last math segment
// ($...$, \(...\), \[...\]); then the last number in the text.

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

function boxedSpans(text: string): Span[] {
  const re = /\\(?:boxed|fbox)\s*/g;
  const spans: Span[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + m[0].length;
    if (text[start] === '{') {
      const group = readBraceGroup(text, start);
      if (group) spans.push({ content: group.content, start: m.index, end: group.end });
    } else {
      // `\boxed 5` (no braces): the argument is the following token, up to a space, '$' or end.
      const token = /^[^\s$]+/.exec(text.slice(start));
      if (token) spans.push({ content: token[0], start: m.index, end: start + token[0].length });
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

function mathSpans(text: string): Span[] {
  const re = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([^\n]+?)\\\)|(?<!\\)\$((?:\\\$|[^$\n])+?)(?<!\\)\$/g;
  const out: Span[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const seg = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (seg !== '') out.push({ content: seg, start: m.index, end: m.index + m[0].length });
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
