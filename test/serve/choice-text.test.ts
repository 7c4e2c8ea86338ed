// How a sample reads in a reply (src/serve/choice-text.ts), on a byte-level tokenizer (one token per
// UTF-8 byte, so a character can span tokens): the text without the final stop token, cut before a stop
// string, and streaming pieces that hold back an incomplete character and always join to the text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { choiceText, textPieces } from '../../src/serve/choice-text.ts';
import type { Tokenizer } from '../../src/tokenizer/types.ts';

const EOS = 256;
const bytes: Tokenizer = {
  vocabSize: 257,
  eosTokenIds: [EOS],
  encode: (text) => [...Buffer.from(text, 'utf8')],
  decode: (ids) => new TextDecoder().decode(Uint8Array.from(ids.filter((t) => t !== EOS))) + (ids.includes(EOS) ? '</s>' : ''),
  renderChat: () => '',
  encodeChat: () => [],
};
const options = { stop: [] as string[], includeStopStr: false, tokensAsIds: false, eosTokenIds: [EOS] };

test('streaming pieces join to the text and never split a character', () => {
  const tokens = bytes.encode('né à 5€');
  const text = bytes.decode(tokens);
  const pieces = textPieces(tokens, bytes, text);
  assert.equal(pieces.length, tokens.length);
  assert.equal(pieces.join(''), text);
  assert.ok(pieces.every((p) => !p.includes('\uFFFD')), JSON.stringify(pieces));
  assert.equal(pieces[1], '', 'the first byte of é is held back');
  assert.equal(pieces[2], 'é');
});

test('the final stop token is not in the text; a stop string cuts it, and stop_reason names what stopped', () => {
  const eos = choiceText({ tokens: [...bytes.encode('ok'), EOS], logprobs: [-1, -1, -1], stopReason: 'stop_token' }, bytes, options);
  assert.deepEqual([eos.text, eos.finishReason, eos.stopReason, eos.tokenTexts.length], ['ok', 'stop', null, 3]);
  const newline = bytes.encode('\n')[0]!;
  const token = choiceText({ tokens: [...bytes.encode('ab'), newline], logprobs: [-1, -1, -1], stopReason: 'stop_token' }, bytes, options);
  assert.deepEqual([token.text, token.stopReason], ['ab', newline]);
  const cut = choiceText({ tokens: bytes.encode('x = 1; y'), logprobs: new Array(8).fill(-1), stopReason: 'stop_string' }, bytes, { ...options, stop: ['; ', '='] });
  assert.deepEqual([cut.text, cut.finishReason, cut.stopReason], ['x ', 'stop', '=']);
  const kept = choiceText({ tokens: bytes.encode('x = 1; y'), logprobs: new Array(8).fill(-1), stopReason: 'stop_string' }, bytes, { ...options, stop: ['='], includeStopStr: true });
  assert.equal(kept.text, 'x =');
  assert.deepEqual(textPieces(bytes.encode('x = 1; y'), bytes, 'x ').join(''), 'x ');
  const long = choiceText({ tokens: bytes.encode('abc'), logprobs: [-1, -1, -1], stopReason: 'max_tokens' }, bytes, options);
  assert.deepEqual([long.text, long.finishReason, long.stopReason], ['abc', 'length', null]);
});
