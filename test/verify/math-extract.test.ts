// Answer extraction and normalisation are linear in the text: boxes, math segments and spacing are
// found without searching the rest of the text again from every unclosed opening. The results are
// the former extraction's (math-extract-reference.ts) on benchmark solutions and seeded random texts,
// except that a box inside another box is no longer joined to it as a further part.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDataset, type MathProblem } from '../../src/env/datasets/index.ts';
import { extractAnswerWithSource, extractAnswerIs, extractBoxed, isBareAnswer, mathAnswersEqual, mathSegments, normalizeAnswer } from '../../src/verify/math/index.ts';
import * as reference from './math-extract-reference.ts';

function randomTexts(tokens: string[], count: number, seed: number): string[] {
  let state = seed;
  const next = (n: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
  return Array.from({ length: count }, () => {
    let s = '';
    for (let k = 1 + next(16); k > 0; k--) s += tokens[next(tokens.length)];
    return s;
  });
}

function assertSameAsReference(text: string): void {
  const label = JSON.stringify(text);
  assert.deepEqual(extractAnswerWithSource(text), reference.extractAnswerWithSource(text), label);
  assert.deepEqual(extractBoxed(text), reference.extractBoxed(text), label);
  assert.deepEqual(extractAnswerIs(text), reference.extractAnswerIs(text), label);
  assert.equal(isBareAnswer(text), reference.isBareAnswer(text), label);
}

const DELIMITERS = ['$', '$$', '\\$', '\\', '\\[', '\\]', '\\(', '\\)', '\n', ' ', 'x', '1', '{', '}', '\\{', '\\}', ' and ', 'The answer is ', '####', '.', ',', '\\text{and}', 'a'];

test('math segments: those of the former regular expression, on 20,000 seeded random texts', () => {
  for (const text of randomTexts(DELIMITERS, 20_000, 11)) assert.deepEqual(mathSegments(text), reference.mathSegments(text), JSON.stringify(text));
});

test('extraction: the former results on benchmark solutions and on random texts with one box command', () => {
  for (const name of ['math500', 'gsm8k', 'aime2024-qwen', 'olympiadbench']) {
    for (const p of loadDataset(name).problems as MathProblem[]) {
      assertSameAsReference(p.question);
      if (p.solution !== undefined) assertSameAsReference(p.solution);
    }
  }
  // One box command per text, so that no box sits inside another (the one intended difference).
  for (const box of ['\\boxed', '\\boxed{', '\\fbox ']) {
    for (const text of randomTexts(DELIMITERS, 4_000, box.length)) {
      const at = text.length >> 1;
      assertSameAsReference(text.slice(0, at) + box + text.slice(at));
    }
  }
});

test('a box inside a box is part of its content', () => {
  assert.equal(extractBoxed('\\boxed{\\boxed{1}}'), '\\boxed{1}');
  assert.equal(extractBoxed('\\boxed{1} and \\boxed{\\boxed{2}}'), '1, \\boxed{2}');
  assert.equal(extractBoxed('\\boxed{1} and \\boxed{2}'), '1, 2', 'side by side boxes are still joined');
});

test('pathological texts of 200,000 openings are handled in linear time', () => {
  const n = 200_000;
  assert.equal(extractBoxed(`${'\\boxed{'.repeat(n)}1${'}'.repeat(n)}`), `${'\\boxed{'.repeat(n - 1)}1${'}'.repeat(n - 1)}`);
  assert.equal(extractBoxed('\\boxed{'.repeat(n)), null);
  assert.equal(extractBoxed(`${'\\boxed'.repeat(n)} 1`), '\\boxed'.repeat(n - 1));
  assert.deepEqual(mathSegments('\\['.repeat(n)), []);
  assert.deepEqual(mathSegments(`${'\\['.repeat(n)}x\\]`), [`${'\\['.repeat(n - 1)}x`]);
  assert.deepEqual(mathSegments(`${'\\('.repeat(n)}\n\\)`), []);
  assert.deepEqual(mathSegments(`${'$a'.repeat(n)}`), Array.from({ length: n / 2 }, () => 'a'));
  assert.equal(normalizeAnswer(`${'\\hspace{'.repeat(n)}5`).text, `${'\\hspace{'.repeat(n)}5`, 'an unclosed \\hspace{ stays');
  assert.equal(normalizeAnswer(`\\hspace{1cm}${'\\hspace{'.repeat(n)}`).text, '\\hspace{'.repeat(n).trim());
  assert.equal(normalizeAnswer(`1${' '.repeat(n)}and${' '.repeat(n)}2`).text, '1,2');
  assert.equal(normalizeAnswer(`1${' '.repeat(n)}2`).text, '1 2');
  assert.equal(mathAnswersEqual('1', `${'\\boxed{'.repeat(n)}1${'}'.repeat(n)}`), false, 'the content of the outer box is itself a box');
});
