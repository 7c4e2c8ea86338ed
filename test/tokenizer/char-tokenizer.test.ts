import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharTokenizer, DEFAULT_ALPHABET, HfTokenizer, loadTokenizer } from '../../src/tokenizer/index.ts';

test('CharTokenizer: specials first, then the alphabet in order; unknown characters become <unk>', () => {
  const tok = new CharTokenizer('ab c');
  assert.equal(tok.vocabSize, 12);
  assert.deepEqual(tok.eosTokenIds, [7, 2]);
  assert.deepEqual(tok.encode('ab c'), [8, 9, 10, 11]);
  assert.deepEqual(tok.encode('abz<|end|>c<eos>'), [8, 9, 3, 7, 11, 2]);
  // A '<' that starts no special token is an ordinary character (here unknown).
  assert.deepEqual(tok.encode('a<b'), [8, 3, 9]);
  assert.equal(tok.decode([8, 9, 10, 11, 7]), 'ab c<|end|>');
  assert.throws(() => tok.decode([12]), /outside the vocabulary/);
  assert.throws(() => new CharTokenizer('aba'), /appears twice/);
});

test('CharTokenizer: chat format and exact chat ids', () => {
  const tok = new CharTokenizer('ab');
  const messages = [
    { role: 'system' as const, content: 'a' },
    { role: 'user' as const, content: 'b' },
    { role: 'assistant' as const, content: 'ab' },
  ];
  assert.equal(tok.renderChat(messages, { addGenerationPrompt: false }), '<|system|>a<|end|><|user|>b<|end|><|assistant|>ab<|end|>');
  assert.deepEqual(tok.encodeChat(messages.slice(0, 2), { addGenerationPrompt: true }), [4, 8, 7, 5, 9, 7, 6]);
  assert.deepEqual(tok.encodeChat(messages, { addGenerationPrompt: false }), [4, 8, 7, 5, 9, 7, 6, 8, 9, 7]);
});

test('CharTokenizer: default alphabet round-trips maths and Python text', () => {
  const tok = new CharTokenizer();
  assert.equal(tok.vocabSize, 8 + 96);
  const text = 'def f(x):\n    return x ** 2  # \\boxed{4}, 50% of $3 ~ {a|b}';
  const ids = tok.encode(text);
  assert.equal(ids.length, text.length);
  assert.ok(!ids.includes(tok.specialId('<unk>')));
  assert.equal(tok.decode(ids), text);
  assert.equal(DEFAULT_ALPHABET.length, 96);
});

test('CharTokenizer: saved as a Hugging Face folder that HfTokenizer and CharTokenizer.load read back identically', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-char-'));
  try {
    const tok = new CharTokenizer('xyz 0123\n');
    tok.save(dir);
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    assert.equal(config.marft_tokenizer, 'char');
    const back = CharTokenizer.load(dir);
    assert.deepEqual(back.alphabet, tok.alphabet);
    assert.ok(loadTokenizer(dir) instanceof CharTokenizer);

    const hf = HfTokenizer.fromDir(dir);
    assert.equal(hf.vocabSize, tok.vocabSize);
    assert.deepEqual(hf.eosTokenIds, [tok.specialId('<|end|>')]);
    const chat = [
      { role: 'system' as const, content: 'x y' },
      { role: 'user' as const, content: '0123\nz?' },
      { role: 'assistant' as const, content: 'zz' },
    ];
    for (const addGenerationPrompt of [false, true]) {
      assert.equal(hf.renderChat(chat, { addGenerationPrompt }), tok.renderChat(chat, { addGenerationPrompt }));
      assert.deepEqual(hf.encodeChat(chat, { addGenerationPrompt }), tok.encodeChat(chat, { addGenerationPrompt }));
    }
    const text = 'x  y\n\n0<|end|>3?';
    assert.deepEqual(hf.encode(text), tok.encode(text));
    assert.equal(hf.decode(tok.encode(text)), tok.decode(tok.encode(text)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CharTokenizer.fromTokenizerJson rejects other tokenizers with a clear message', () => {
  assert.throws(() => CharTokenizer.fromTokenizerJson({ model: { type: 'BPE', vocab: { a: 0 }, merges: ['a b'] } }), /not a character-level tokenizer/);
  assert.throws(() => CharTokenizer.fromTokenizerJson({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] } }), /expected special token <pad> at id 0/);
});
