// Stop strings applied after the fact (src/engine/stop-strings.ts), as the torch engine and the vLLM
// sampler do: a sample cut by cutAtStopString equals the embedded engine's own sample with the same
// stop strings (it checks the decoded text after every token), and the cases at the edges (no
// match, a stop token at the same token, an empty sample) by hand. No Python needed: runs in CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, tinyDecoderConfig } from '../../src/engine/index.ts';
import type { SampleParams, SampleResult } from '../../src/engine/types.ts';
import { checkStopStringsDecodable, cutAtStopString } from '../../src/engine/stop-strings.ts';

// Each id as "<id>": a stop string can begin inside one token and end inside another.
const decode = (ids: number[]): string => ids.map((id) => `<${id}>`).join('');
const result = (tokens: number[], stopReason: SampleResult['stopReason'] = 'max_tokens'): SampleResult =>
  ({ tokens: [...tokens], logprobs: tokens.map((t) => -t / 10), stopReason });

test('cutAtStopString: cuts at the token that completes the earliest stop string, with its log-probs', () => {
  const r = result([1, 2, 3, 4, 5, 2, 3]);
  cutAtStopString(r, ['2><3', '5>'], decode);
  assert.deepEqual(r, { tokens: [1, 2, 3], logprobs: [-0.1, -0.2, -0.3], stopReason: 'stop_string' });
  const one = result([7, 8]);
  cutAtStopString(one, ['<7'], decode);
  assert.deepEqual(one, { tokens: [7], logprobs: [-0.7], stopReason: 'stop_string' });
});

test('cutAtStopString: no match, an empty sample and a stop token ending the sample at the same token leave it as it is', () => {
  const none = result([1, 2, 3]);
  cutAtStopString(none, ['9'], decode);
  assert.deepEqual(none, result([1, 2, 3]));
  const empty = result([]);
  cutAtStopString(empty, ['<'], decode);
  assert.deepEqual(empty, result([]));
  // The stop token comes first (the embedded engine checks stop tokens before stop strings) ...
  const byToken = result([1, 2, 3], 'stop_token');
  cutAtStopString(byToken, ['3>'], decode);
  assert.deepEqual(byToken, result([1, 2, 3], 'stop_token'));
  // ... but a stop string completed before the stop token ends the sample earlier.
  const earlier = result([1, 2, 3], 'stop_token');
  cutAtStopString(earlier, ['2>'], decode);
  assert.deepEqual(earlier, { tokens: [1, 2], logprobs: [-0.1, -0.2], stopReason: 'stop_string' });
});

test('cutAtStopString after the fact equals the embedded engine stopping on the same strings', async () => {
  const config = tinyDecoderConfig({ architecture: 'qwen3', vocabSize: 40, hiddenSize: 32, intermediateSize: 64, layers: 2, heads: 4, kvHeads: 2, context: 64, bosTokenId: 0, eosTokenIds: [] });
  const engine = createEngine(config, { seed: 4, decode });
  try {
    const prompts = Array.from({ length: 12 }, (_, i) => [0, 1 + i, 2 + (i * 7) % 30]);
    // Seeded sampling at temperature 1: each sample draws the same tokens up to where it stops.
    const params: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 12, stopTokenIds: [], stopStrings: [], seed: 11 };
    const full = await engine.sample({ kind: 'base' }, prompts, params);
    // Stop strings taken from the samples themselves (a two-token span, a one-digit fragment), so that some cut and some do not.
    const stops = [decode(full[0]!.tokens.slice(4, 6)).slice(1, -1), `${full[1]!.tokens[7]}><`];
    const stopped = await engine.sample({ kind: 'base' }, prompts, { ...params, stopStrings: stops });
    let cut = 0;
    full.forEach((r, i) => {
      cutAtStopString(r, stops, decode);
      // Log-probs to float32 rounding: once a sample stops, the others' rows are batched differently.
      assert.deepEqual([r.tokens, r.stopReason], [stopped[i]!.tokens, stopped[i]!.stopReason], `prompt ${i}`);
      r.logprobs.forEach((x, k) => assert.ok(Math.abs(x - stopped[i]!.logprobs[k]!) < 1e-6, `prompt ${i} token ${k}`));
      if (r.stopReason === 'stop_string') cut++;
    });
    assert.ok(cut >= 2 && cut < prompts.length, `${cut} of ${prompts.length} samples cut`);
  } finally {
    await engine.dispose();
  }
});

test('stop strings without a decoder are refused in one line', () => {
  assert.throws(() => checkStopStringsDecodable(['x'], undefined), /^Error: stopStrings need a decode function \(engine option `decode`\)$/);
  checkStopStringsDecodable([], undefined);
  checkStopStringsDecodable(['x'], decode);
});
