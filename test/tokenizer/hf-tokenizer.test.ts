// HfTokenizer against transformers' AutoTokenizer (the oracle in hf_oracle.py, run with .venv-oracle).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharTokenizer, HfTokenizer, MissingTokenizerError, type ChatMessage } from '../../src/tokenizer/index.ts';
import { skipWithoutVenv as skip } from '../python-oracle.ts';
import { expectations, type Expectations } from './hf-oracle.ts';

const TEXTS = [
  'Natalia sold 48 clips in April; how many in May?',
  'def solve(n):\n    return sum(i * i for i in range(n))\n',
  '  leading spaces, trailing\t\n\nand unicode: café π ≤ 3 — 😀',
  '<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>',
  "print(a , b) ; s = 'it ' + \"'s\" ! ok ? n't",
];

const CHATS: ChatMessage[][] = [
  [{ role: 'user', content: 'What is 2 + 3?' }],
  [
    { role: 'system', content: 'You are the Planner.' },
    { role: 'user', content: 'Solve x + 1 = 3.' },
    { role: 'assistant', content: 'Plan: subtract 1.' },
    { role: 'user', content: "Now it is Solver's turn. Executes the plan and produces the final answer." },
  ],
];

test('HfTokenizer matches transformers on a tiny Qwen-style BPE tokenizer: ids, decoding, chat text and chat ids', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-hf-'));
  try {
    const variants = [{}, { enable_thinking: false }];
    const wants = expectations(dir, { make_qwen: true, texts: TEXTS, chats: CHATS, variants });
    variants.forEach((templateVariables, v) => {
      const want = wants[v]!;
      const tok = HfTokenizer.fromDir(dir, { templateVariables });
      assert.equal(tok.vocabSize, want.len);
      TEXTS.forEach((text, i) => {
        assert.deepEqual(tok.encode(text), want.ids[i], `ids of text ${i}`);
        assert.equal(tok.decode(want.ids[i]!), want.decoded[i], `decoding of text ${i}`);
        assert.equal(tok.decode(tok.encode(text)), text.normalize('NFC'), `round trip of text ${i}`);
      });
      CHATS.forEach((chat, i) => {
        [false, true].forEach((addGenerationPrompt, g) => {
          assert.equal(tok.renderChat(chat, { addGenerationPrompt }), want.chat_text[i]![g], `chat ${i} text, generation prompt ${addGenerationPrompt}`);
          assert.deepEqual(tok.encodeChat(chat, { addGenerationPrompt }), want.chat_ids[i]![g], `chat ${i} ids`);
        });
      });
      // generation_config.json lists <|im_end|> and <|endoftext|>; tokenizer_config.json's eos_token is <|im_end|>.
      assert.deepEqual(new Set(tok.eosTokenIds), new Set([want.eos_token_id, tok.tokenToId('<|endoftext|>')!]));
      assert.equal(tok.eosTokenIds.length, 2);
    });
    const noThinking = HfTokenizer.fromDir(dir, { templateVariables: { enable_thinking: false } });
    assert.ok(noThinking.renderChat(CHATS[0]!, { addGenerationPrompt: true }).endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("transformers reads CharTokenizer's folder with the same ids and chat text", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-char-hf-'));
  try {
    const tok = new CharTokenizer();
    tok.save(dir);
    const texts = ['x = 3\n#### 3', 'print(1 + 2)  # <|end|> inside'];
    const [want] = expectations(dir, { texts, chats: CHATS }) as [Expectations];
    texts.forEach((text, i) => assert.deepEqual(tok.encode(text), want.ids[i]));
    texts.forEach((text, i) => assert.equal(tok.decode(want.ids[i]!), want.decoded[i]));
    CHATS.forEach((chat, i) => {
      [false, true].forEach((addGenerationPrompt, g) => {
        assert.equal(tok.renderChat(chat, { addGenerationPrompt }), want.chat_text[i]![g]);
        assert.deepEqual(tok.encodeChat(chat, { addGenerationPrompt }), want.chat_ids[i]![g]);
      });
    });
    assert.equal(want.eos_token_id, tok.specialId('<|end|>'));
    assert.equal(want.len, tok.vocabSize);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a model folder without tokenizer.json gives a clear error saying only token ids can be used', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-notok-'));
  try {
    assert.throws(() => HfTokenizer.fromDir(dir), (e: unknown) => e instanceof MissingTokenizerError && /only token ids can be used/.test(e.message));
    const char = new CharTokenizer('ab');
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(char.toTokenizerJson()));
    // No tokenizer_config.json: encoding works, chat rendering says what is missing.
    const tok = HfTokenizer.fromDir(dir);
    assert.deepEqual(tok.encode('ba'), [9, 8]);
    assert.throws(() => tok.renderChat([{ role: 'user', content: 'a' }], { addGenerationPrompt: true }), /no chat template/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
