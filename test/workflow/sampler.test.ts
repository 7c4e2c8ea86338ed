// engineSampler (grouping by policy, base target) and ScriptedSampler details.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Engine, SampleParams, SampleResult, Target } from '../../src/engine/types.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, coderTester, engineSampler, rollout } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

/** An engine whose sample() answers prompt p with tokens [len(p), target tag] and records each call. */
function fakeEngine() {
  const calls: { target: Target; prompts: number[][]; params: SampleParams }[] = [];
  const engine = {
    async sample(target: Target, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
      calls.push({ target, prompts, params });
      const tag = target.kind === 'adapter' ? target.name.length : 0;
      return prompts.map((p) => ({ tokens: [p.length % 90 + 8, tag + 8, tok.specialId('<|end|>')], logprobs: [-1, -2, -3], stopReason: 'stop_token' as const }));
    },
  } as unknown as Engine;
  return { engine, calls };
}

test('engineSampler: one engine.sample per policy, "base" → base target, results back in request order', async () => {
  const { engine, calls } = fakeEngine();
  const sampler = engineSampler(engine);
  const out = await sampler.sample(
    [
      { policy: 'alpha', prompt: [1] },
      { policy: 'base', prompt: [1, 2] },
      { policy: 'alpha', prompt: [1, 2, 3] },
      { policy: 'be', prompt: [1, 2, 3, 4] },
    ],
    PARAMS,
  );
  assert.deepEqual(calls.map((c) => [c.target, c.prompts]), [
    [{ kind: 'adapter', name: 'alpha' }, [[1], [1, 2, 3]]],
    [{ kind: 'base' }, [[1, 2]]],
    [{ kind: 'adapter', name: 'be' }, [[1, 2, 3, 4]]],
  ]);
  assert.deepEqual(out.map((r) => r.tokens.slice(0, 2)), [[9, 13], [10, 8], [11, 13], [12, 10]]);
});

test('rollout through engineSampler: a Coder–Tester round with two adapters calls the engine once per adapter', async () => {
  const { engine, calls } = fakeEngine();
  const wf = coderTester({ policies: ['coder_lora', 'tester_lora'] });
  const envs = [new FakeEnv('a', 'A', () => ({ teamReward: 0, done: true })), new FakeEnv('b', 'BB', () => ({ teamReward: 0, done: true }))];
  const episodes = await rollout(wf, envs, { sampler: engineSampler(engine), tokenizer: tok, params: PARAMS });
  assert.deepEqual(calls.map((c) => [c.target, c.prompts.length]), [
    [{ kind: 'adapter', name: 'coder_lora' }, 2],
    [{ kind: 'adapter', name: 'tester_lora' }, 2],
  ]);
  const a = episodes[0]!.actions[0]!;
  assert.deepEqual(a.promptTokens, calls[0]!.prompts[0]);
  assert.deepEqual(a.actionTokens, [a.promptTokens.length % 90 + 8, 'coder_lora'.length + 8, tok.specialId('<|end|>')]);
  assert.deepEqual(a.behaviourLogprobs, [-1, -2, -3]);
  assert.equal(a.text, tok.decode(a.actionTokens.slice(0, 2)));
});

test('ScriptedSampler: exact tokens, given logprobs, no stop appended, truncation at maxNewTokens, call records', async () => {
  const sampler = new ScriptedSampler(tok, ({ row }) =>
    row === 0 ? { tokens: [20, 21], logprobs: [-0.5, -0.25], appendStop: false } : { text: 'abcdef' },
  );
  const out = await sampler.sample([{ policy: 'p', prompt: [1] }, { policy: 'p', prompt: [2] }], { ...PARAMS, maxNewTokens: 4, stopTokenIds: [2] });
  assert.deepEqual(out[0], { tokens: [20, 21], logprobs: [-0.5, -0.25], stopReason: 'max_tokens' });
  assert.deepEqual(out[1]!.tokens, tok.encode('abcd'));
  assert.equal(out[1]!.stopReason, 'max_tokens');
  assert.equal(sampler.calls.length, 1);
  assert.deepEqual(sampler.calls[0]!.requests.map((r) => r.prompt), [[1], [2]]);
  const stopped = await new ScriptedSampler(tok, () => 'ab').sample([{ policy: 'p', prompt: [] }], { ...PARAMS, stopTokenIds: [2] });
  assert.deepEqual(stopped[0]!.tokens, [...tok.encode('ab'), 2]);
  await assert.rejects(new ScriptedSampler(tok, () => ({})).sample([{ policy: 'p', prompt: [] }], PARAMS), /exactly one of text \/ tokens/);
});
