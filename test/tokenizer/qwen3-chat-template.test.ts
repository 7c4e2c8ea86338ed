// HfTokenizer with Qwen3's real chat template (its <think> handling: reasoning kept only after the last user
// query, the empty think block of enable_thinking=false) and Qwen3's folder layout (Qwen2Tokenizer class,
// <think>/<tool_call> as plain added tokens), against transformers' AutoTokenizer; and where the template
// is read from: tokenizer_config.json, chat_template.jinja, or both (transformers prefers the .jinja file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HfTokenizer, type ChatMessage } from '../../src/tokenizer/index.ts';
import { skipWithoutVenv as skip, withTempDir } from '../python-oracle.ts';
import { expectations, type Expectations, type FolderKind } from './hf-oracle.ts';

const TEXTS = [
  'Natalia sold 48 clips in April; how many in May?',
  '<|im_start|>assistant\n<think>\nLet x = 3.\n</think>\n\n\\boxed{7}<|im_end|>',
  '<tool_call>\n{"name": "f"}\n</tool_call><tool_response>42</tool_response>',
  '  café π ≤ 3 — 😀\r\n\tend',
];

const THOUGHT = '<think>\nFirst subtract 1.\n</think>\n\nPlan: subtract 1.';
const CHATS: ChatMessage[][] = [
  [{ role: 'user', content: 'What is 2 + 3?' }],
  // An earlier assistant turn loses its <think> block (before the last user query).
  [
    { role: 'system', content: 'You are the Planner.' },
    { role: 'user', content: 'Solve x + 1 = 3.' },
    { role: 'assistant', content: THOUGHT },
    { role: 'user', content: "Now it is Solver's turn." },
  ],
  // The last turn, after the last user query, keeps it (re-formatted).
  [{ role: 'user', content: 'Solve x + 1 = 3.' }, { role: 'assistant', content: '<think>\n\nsubtract\n\n</think>\n\n\nx = 2' }],
  // A user turn that is only a tool response is not a query: the assistant turn before it keeps its thought.
  [
    { role: 'user', content: 'Compute f.' },
    { role: 'assistant', content: '<think>call f</think>calling f' },
    { role: 'user', content: '<tool_response>\n42\n</tool_response>' },
  ],
  // A system message after the first one is rendered as its own turn.
  [{ role: 'user', content: 'a' }, { role: 'system', content: 'be brief' }, { role: 'user', content: 'b' }],
];
const VARIANTS: Record<string, unknown>[] = [{}, { enable_thinking: false }, { enable_thinking: true }];

function checkFolder(kind: FolderKind, check?: (dir: string, tok: HfTokenizer) => void): void {
  withTempDir(kind, (dir) => {
    const wants = expectations(dir, { make: kind, texts: TEXTS, chats: CHATS, variants: VARIANTS });
    VARIANTS.forEach((templateVariables, v) => {
      const want = wants[v] as Expectations;
      const tok = HfTokenizer.fromDir(dir, { templateVariables });
      const label = `${kind} ${JSON.stringify(templateVariables)}`;
      assert.equal(tok.vocabSize, want.len);
      TEXTS.forEach((text, i) => {
        assert.deepEqual(tok.encode(text), want.ids[i], `${label}: ids of text ${i}`);
        assert.equal(tok.decode(want.ids[i]!), want.decoded[i], `${label}: decoding of text ${i}`);
        assert.equal(tok.decode(tok.encode(text)), text.normalize('NFC'), `${label}: round trip of text ${i}`);
      });
      CHATS.forEach((chat, i) => {
        [false, true].forEach((addGenerationPrompt, g) => {
          assert.equal(tok.renderChat(chat, { addGenerationPrompt }), want.chat_text[i]![g], `${label}: chat ${i} text, generation prompt ${addGenerationPrompt}`);
          assert.deepEqual(tok.encodeChat(chat, { addGenerationPrompt }), want.chat_ids[i]![g], `${label}: chat ${i} ids`);
        });
      });
      assert.deepEqual(new Set(tok.eosTokenIds), new Set([want.eos_token_id, tok.tokenToId('<|endoftext|>')!]));
      check?.(dir, tok);
    });
  });
}

test("Qwen3's folder (template in tokenizer_config.json, Qwen2Tokenizer) matches transformers, with and without enable_thinking", { skip }, () => {
  checkFolder('qwen3', (dir, tok) => {
    assert.equal(typeof JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')).chat_template, 'string');
    // <think> is one added token (not special, so it is not skipped or split).
    assert.deepEqual(tok.encode('<think>'), [tok.tokenToId('<think>')]);
    // The thought of a turn before the last query is dropped; the last turn's is kept.
    assert.ok(!tok.renderChat(CHATS[1]!, { addGenerationPrompt: false }).includes('First subtract'));
    assert.ok(tok.renderChat(CHATS[2]!, { addGenerationPrompt: false }).includes('<think>\nsubtract\n</think>\n\nx = 2'));
  });
});

test('a folder whose template is only in chat_template.jinja (as newer transformers save it) matches transformers', { skip }, () => {
  checkFolder('qwen3-jinja', (dir) => {
    assert.ok(existsSync(join(dir, 'chat_template.jinja')));
    assert.equal(JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')).chat_template, undefined);
  });
});

test("with a template in both chat_template.jinja and tokenizer_config.json, the .jinja file's is used, as transformers does", { skip }, () => {
  checkFolder('qwen3-both', (dir, tok) => {
    assert.equal(JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')).chat_template, "{{ 'stale template' }}");
    assert.equal(tok.chatTemplate, readFileSync(join(dir, 'chat_template.jinja'), 'utf8'));
  });
});
