// The word problems examples/real/ trains SmolLM2 on: the shipped files are what the generator writes
// for seed 7 (so they can be rebuilt and audited), every reference answer is the arithmetic its
// question states, train and test share no question, and the workflow task reads them as GSM8K files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWordProblems } from '../../scripts/make-word-problems.ts';
import { loadProblemSets } from '../../src/tasks/problem-source.ts';
import { taskCharTokenizer } from '../../src/tasks/tiny-model.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shipped = (split: string) => readFileSync(join(root, `examples/real/data/word-problems-${split}.jsonl`), 'utf8');

test('the shipped word-problem files are the generator’s output for seed 7 (600 train, 200 test)', () => {
  const sets = makeWordProblems(7, 600, 200);
  assert.equal(shipped('train'), sets.train.map((p) => JSON.stringify(p)).join('\n') + '\n');
  assert.equal(shipped('test'), sets.test.map((p) => JSON.stringify(p)).join('\n') + '\n');
});

test('each answer is the arithmetic of its question, and no question is in both splits', () => {
  const { train, test: held } = makeWordProblems(11, 300, 100);
  const trainQuestions = new Set(train.map((p) => p.question));
  assert.equal(trainQuestions.size, 300);
  for (const p of held) assert.ok(!trainQuestions.has(p.question), p.question);
  for (const p of [...train, ...held]) {
    const numbers = [...p.question.matchAll(/\d+/g)].map((m) => Number(m[0]));
    const answer = Number(p.answer.split('#### ')[1]);
    const expected = /gives/.test(p.question) ? numbers[0]! - numbers[1]!
      : /bags with/.test(p.question) ? numbers[0]! * numbers[1]!
        : numbers.reduce((a, b) => a + b, 0);
    assert.equal(answer, expected, p.question);
    assert.ok(answer > 0);
  }
});

test('the workflow task reads them as GSM8K files: 600 training and 200 held-out problems', () => {
  const sets = loadProblemSets(
    { name: 'gsm8k-train', file: join(root, 'examples/real/data/word-problems-train.jsonl') },
    { heldOutFraction: 0, splitSeed: 0, maxProblemTokens: 0, heldOut: { name: 'gsm8k', file: join(root, 'examples/real/data/word-problems-test.jsonl') } },
    taskCharTokenizer(),
  );
  assert.equal(sets.train.length, 600);
  assert.equal(sets.heldOut.length, 200);
});
