// The maths verifier's public surface (spec section 3, "Maths answers").
//
//   mathAnswersEqual(gold, pred)  gold and pred are final answers or texts holding one (\boxed{..},
//                                 "#### N", "The answer is ..."); the marked answer is taken first.
//   gradeMathResponse(gold, text) a full model response: extract (boxed, ####, answer-is, last
//                                 number), then compare.
import { extractAnswer, isBareAnswer } from './extract.ts';
import { finalAnswersEqual } from './equal.ts';

export { extractAnswer, extractAnswerWithSource, extractBoxed, extractAfterHashes, extractAnswerIs, extractLastNumber, mathSegments, isBareAnswer } from './extract.ts';
export { finalAnswersEqual, numbersClose, NUMERIC_REL_TOL } from './equal.ts';
export { normalizeAnswer } from './normalize.ts';

/**
 * The answer a text stands for: its marked answer (\boxed, ####, "the answer is") if any; a bare answer
 * ("x = 3", "12 and 13") is itself; prose falls back to its last math segment, then its last number.
 */
function answerOf(text: string): string {
  if (/\\boxed|\\fbox|####/.test(text)) return extractAnswer(text) ?? text;
  if (isBareAnswer(text)) return text;
  return extractAnswer(text) ?? text;
}

/** True when pred's answer is mathematically equivalent to gold's. Never throws. */
export function mathAnswersEqual(gold: string, pred: string): boolean {
  try {
    return finalAnswersEqual(answerOf(gold), answerOf(pred));
  } catch {
    return false;
  }
}

/** Grades a full response against a gold answer; `extracted` is null when the response holds no answer. */
export function gradeMathResponse(gold: string, response: string): { correct: boolean; extracted: string | null } {
  const extracted = extractAnswer(response);
  if (extracted === null) return { correct: false, extracted };
  return { correct: mathAnswersEqual(gold, extracted), extracted };
}
