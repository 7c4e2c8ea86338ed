// HfTokenizer on SentencePiece-style tokenizer.json files as Llama-2 and TinyLlama ship them ("▁" for
// spaces, byte fallback to <0x..> tokens, <s>/</s> specials), built offline by the oracle
// (test/tokenizer/hf_oracle.py) and compared with transformers' AutoTokenizer and with the tokenizers
// library reading the same tokenizer.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HfTokenizer, type ChatMessage } from '../../src/tokenizer/index.ts';
import { skipWithoutVenv as skip, withTempDir } from '../python-oracle.ts';
import { expectations, isTemplateError, type Expectations } from './hf-oracle.ts';

const TEXTS = [
  'Natalia sold 48 clips in April; how many in May?',
  'def solve(n):\n    return sum(i * i for i in range(n))\n',
  '  leading spaces, trailing\t\n\nand unicode: café π ≤ 3 — 😀', // é, π, ≤, —, 😀 are not in the vocabulary: bytes
  '<s>[INST] hi [/INST] ok</s><s>[INST] again [/INST]',
  '<|user|>\nWhat is 2+3?</s>\n<|assistant|>\n',
  ' x',
  'Hello  world ',
  'é',
  '<unk> text',
];

const CHATS: ChatMessage[][] = [
  [{ role: 'user', content: 'What is 2 + 3?' }],
  [
    { role: 'system', content: 'You are the Planner.' },
    { role: 'user', content: ' Solve x + 1 = 3. ' },
    { role: 'assistant', content: 'Plan: subtract 1.' },
    { role: 'user', content: "Now it is Solver's turn." },
  ],
  // Llama-2's template refuses roles that do not alternate (raise_exception); TinyLlama's renders them.
  [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }],
];

/** Text, ids, decoding and chats against `want`; `ids` and `chatIds` say which reading the ids must equal. */
function checkAgainst(tok: HfTokenizer, want: Expectations, source: 'transformers' | 'file'): void {
  assert.equal(tok.vocabSize, want.len);
  assert.deepEqual(tok.eosTokenIds, [2]);
  TEXTS.forEach((text, i) => {
    const ids = source === 'transformers' ? want.ids[i] : want.file_ids[i];
    assert.deepEqual(tok.encode(text), ids, `ids of text ${i} (${source})`);
    assert.deepEqual(want.file_ids[i], tok.encode(text), `text ${i}: the tokenizers library reads tokenizer.json the same way`);
    assert.equal(tok.decode(want.file_ids[i]!), want.file_decoded[i], `decoding of text ${i}`);
  });
  CHATS.forEach((chat, i) => {
    [false, true].forEach((addGenerationPrompt, g) => {
      const text = want.chat_text[i]![g]!;
      if (isTemplateError(text)) {
        assert.throws(() => tok.renderChat(chat, { addGenerationPrompt }), (e: Error) => e.message.includes('Conversation roles must alternate'), `chat ${i} must be refused`);
        return;
      }
      assert.equal(tok.renderChat(chat, { addGenerationPrompt }), text, `chat ${i} text, generation prompt ${addGenerationPrompt}`);
      const ids = source === 'transformers' ? want.chat_ids[i]![g] : want.file_chat_ids[i]![g];
      assert.deepEqual(tok.encodeChat(chat, { addGenerationPrompt }), ids, `chat ${i} ids, generation prompt ${addGenerationPrompt} (${source})`);
    });
  });
}

test("Llama-2's legacy tokenizer.json (Prepend/Replace normalizer, byte fallback) and chat template match transformers", { skip }, () => {
  withTempDir('llama-legacy', (dir) => {
    const [want] = expectations(dir, { make: 'llama-legacy', texts: TEXTS, chats: CHATS }) as [Expectations];
    const tok = HfTokenizer.fromDir(dir);
    checkAgainst(tok, want, 'transformers');
    // Byte fallback: a character outside the vocabulary is its UTF-8 bytes (é = C3 A9), and decodes back.
    assert.deepEqual(tok.encode('é').slice(-2), [tok.tokenToId('<0xC3>'), tok.tokenToId('<0xA9>')]);
    // "▁" is prepended to the text (and after every special token, the legacy behaviour) and stripped once on decoding.
    assert.equal(tok.decode(tok.encode('Hello  world ')), 'Hello  world ');
    assert.equal(tok.decode(tok.encode('<s>[INST] hi')), '<s> [INST] hi');
    assert.equal(tok.renderChat(CHATS[0]!, { addGenerationPrompt: true }), '<s>[INST] What is 2 + 3? [/INST]');
    assert.equal(tok.decode([]), '');
  });
});

test('a Metaspace tokenizer.json (prepend_scheme "first") with the LlamaTokenizer class matches transformers', { skip }, () => {
  withTempDir('llama-metaspace', (dir) => {
    const [want] = expectations(dir, { make: 'llama-metaspace', texts: TEXTS, chats: CHATS }) as [Expectations];
    const tok = HfTokenizer.fromDir(dir);
    checkAgainst(tok, want, 'transformers');
    // "first": only the start of the text gets "▁", not the text after a special token.
    assert.notDeepEqual(tok.encode('<s>[INST]').slice(1), tok.encode('[INST]'));
    assert.deepEqual(tok.encode('<s>[INST]').slice(1), tok.encode('x[INST]').slice(tok.encode('x').length));
  });
});

test("TinyLlama's folder (legacy tokenizer.json, LlamaTokenizer, Zephyr template): the file's encoding and transformers' chat text", { skip }, () => {
  withTempDir('tinyllama', (dir) => {
    const [want] = expectations(dir, { make: 'tinyllama', texts: TEXTS, chats: CHATS }) as [Expectations];
    const tok = HfTokenizer.fromDir(dir);
    // transformers 5 rebuilds LlamaTokenizer's pipeline from the class (Metaspace "first" when "legacy" is
    // false) instead of using the file's normalizer, so after a special token it writes no "▁" (e.g. "</s>\n");
    // HfTokenizer encodes as the file says, as the tokenizers library and transformers 4 do (docs/tokenizers.md).
    // The chat text itself does not depend on the class: it is compared with transformers'.
    checkAgainst(tok, want, 'file');
  });
});
