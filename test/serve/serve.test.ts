// marft serve's OpenAI-compatible server, driven by the official `openai` npm client, against a tiny
// run folder (test/serve/tiny-run.ts: two agents with adapters that differ from the base):
//   - /v1/models lists base and the agents; each agent's chat and completions are its adapter's samples
//     (the same tokens and log-probs as the engine's own sample call on the chat-rendered prompt);
//   - a streamed chat completion reassembles to the non-streamed one for the same seed, log-probs too;
//   - completions with logprobs (tokens, token_logprobs, text_offset), stop sequences, n, seeds;
//   - a burst of 8 concurrent requests is answered in fewer engine calls than requests (the engine is
//     held at its first call until all 8 have arrived, so the batching does not depend on timing);
//   - errors in OpenAI's shape (unknown model 404, malformed JSON 400, context overflow 400, a body over
//     the limit 413, unknown route 404, wrong method 405, an unsupported field 400, an engine failure
//     500), each followed by a request that succeeds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { SamplingEngine } from '../../src/engine/types.ts';
import { openServedRun, type ServedRun } from '../../src/serve/served-run.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { makeTinyRun } from './tiny-run.ts';

let dir = '';
let served: ServedRun;
let server: RunningServer;
let client: OpenAI;
/** While set, every engine.sample call waits for it (the burst test). */
let gate: Promise<void> | null = null;
/** Set to make the next engine.sample call fail (the 500 test). */
let failNext = false;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'marft-serve-'));
  const run = await makeTinyRun(dir);
  served = await openServedRun(run.runDir, { team: false });
  const engine = served.engine;
  const held: SamplingEngine = {
    info: engine.info,
    sample: async (target, prompts, params) => {
      if (gate) await gate;
      if (failNext) {
        failNext = false;
        throw new Error('injected engine failure');
      }
      return engine.sample(target, prompts, params);
    },
    score: (target, batch, options) => engine.score(target, batch, options),
    dispose: () => engine.dispose(),
  };
  server = await startServer({ engine: held, models: served.models, tokenizer: served.tokenizer, host: '127.0.0.1', port: 0, bodyLimit: 1 << 20, log: () => {} });
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await server?.close();
  await served?.engine.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const question = [{ role: 'user' as const, content: 'Tom has 3 apples and buys 2 more. How many apples does he have?' }];
/** vLLM's extensions, which the openai client passes through in the body. */
const ids = { return_token_ids: true } as Record<string, unknown>;

test('/v1/models lists base and one model per trained agent', async () => {
  const list = await client.models.list();
  assert.deepEqual(list.data.map((m) => m.id), ['base', 'planner', 'solver']);
  const planner = await client.models.retrieve('planner');
  assert.equal(planner.id, 'planner');
  assert.equal((planner as unknown as { max_model_len: number }).max_model_len, 2048);
});

test('an agent\'s chat completion is its adapter\'s sample of the chat-rendered prompt, log-probs included; the base is another model', async () => {
  const tokenizer = served.tokenizer!;
  const prompt = tokenizer.encodeChat(question, { addGenerationPrompt: true });
  const params = { temperature: 0.9, topP: 0.95, topK: 0, maxNewTokens: 12, stopTokenIds: [...tokenizer.eosTokenIds], stopStrings: [], seed: 11 };
  for (const agent of ['planner', 'solver']) {
    const reply = await client.chat.completions.create({ model: agent, messages: question, max_tokens: 12, temperature: 0.9, top_p: 0.95, seed: 11, logprobs: true, ...ids });
    const [own] = await served.engine.sample({ kind: 'adapter', name: `policy-${agent}` }, [prompt], params);
    const choice = reply.choices[0]! as typeof reply.choices[0] & { token_ids: number[] };
    assert.deepEqual(choice.token_ids, own!.tokens, agent);
    assert.deepEqual(choice.logprobs!.content!.map((e) => e.logprob), own!.logprobs, agent);
    assert.deepEqual(choice.logprobs!.content!.map((e) => e.token), own!.tokens.map((t) => tokenizer.decode([t])));
    const text = own!.stopReason === 'stop_token' ? tokenizer.decode(own!.tokens.slice(0, -1)) : tokenizer.decode(own!.tokens);
    assert.equal(choice.message.content, text);
    assert.equal(choice.finish_reason, own!.stopReason === 'max_tokens' ? 'length' : 'stop');
    assert.equal(reply.usage!.prompt_tokens, prompt.length);
    assert.equal(reply.usage!.completion_tokens, own!.tokens.length);
  }
  // The adapters change the model: greedy tokens of the base and of an agent differ.
  const greedy = async (model: string): Promise<number[]> => ((await client.chat.completions.create({ model, messages: question, max_tokens: 12, temperature: 0, ...ids })).choices[0] as unknown as { token_ids: number[] }).token_ids;
  assert.notDeepEqual(await greedy('base'), await greedy('planner'));
});

test('a streamed chat completion reassembles to the non-streamed one for the same seed (text, log-probs, finish reason)', async () => {
  const body = { model: 'solver', messages: question, max_tokens: 16, temperature: 1, seed: 5, logprobs: true, top_logprobs: 1 };
  const whole = await client.chat.completions.create(body);
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let text = '';
  const logprobs: number[] = [];
  let finish: string | null = null;
  let usage: unknown = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    text += c.delta.content ?? '';
    for (const e of c.logprobs?.content ?? []) logprobs.push(e.logprob);
    if (c.finish_reason) finish = c.finish_reason;
  }
  const choice = whole.choices[0]!;
  assert.equal(text, choice.message.content);
  assert.deepEqual(logprobs, choice.logprobs!.content!.map((e) => e.logprob));
  assert.equal(finish, choice.finish_reason);
  assert.deepEqual(usage, whole.usage);
  assert.ok(chunks >= logprobs.length, `${chunks} chunks for ${logprobs.length} tokens`);
  assert.deepEqual(choice.logprobs!.content![0]!.top_logprobs.map((t) => t.token), [choice.logprobs!.content![0]!.token]);
});

test('completions: text and token-id prompts, logprobs, stop sequences, n and seeds', async () => {
  const tokenizer = served.tokenizer!;
  const prompt = 'Question: 2 + 3 = ';
  const reply = await client.completions.create({ model: 'planner', prompt, max_tokens: 10, temperature: 0.8, seed: 3, logprobs: 1, n: 3, ...ids });
  assert.equal(reply.choices.length, 3);
  const [own] = [await served.engine.sample({ kind: 'adapter', name: 'policy-planner' }, Array.from({ length: 3 }, () => tokenizer.encode(prompt)), { temperature: 0.8, topP: 1, topK: 0, maxNewTokens: 10, stopTokenIds: [...tokenizer.eosTokenIds], stopStrings: [], seed: 3 })];
  reply.choices.forEach((c, k) => {
    const lp = c.logprobs!;
    assert.deepEqual((c as unknown as { token_ids: number[] }).token_ids, own![k]!.tokens);
    assert.deepEqual(lp.token_logprobs, own![k]!.logprobs);
    assert.equal(lp.tokens!.length, own![k]!.tokens.length);
    assert.equal(lp.text_offset!.length, lp.tokens!.length);
    assert.equal(lp.text_offset![0], 0);
  });
  assert.notDeepEqual(reply.choices[0]!.text, reply.choices[1]!.text, 'n samples draw from different streams');
  // A token-id prompt gives what its text gives; the same seed the same completion.
  const again = await client.completions.create({ model: 'planner', prompt: tokenizer.encode(prompt), max_tokens: 10, temperature: 0.8, seed: 3, n: 3 });
  assert.deepEqual(again.choices.map((c) => c.text), reply.choices.map((c) => c.text));
  // A stop sequence: the text ends before it, finish_reason stop, stop_reason names it.
  const free = await client.completions.create({ model: 'solver', prompt, max_tokens: 24, temperature: 0 });
  const full = free.choices[0]!.text;
  assert.ok(full.length >= 6, `greedy text ${JSON.stringify(full)}`);
  const stop = full.slice(3, 5);
  const cut = await client.completions.create({ model: 'solver', prompt, max_tokens: 24, temperature: 0, stop: [stop] });
  assert.equal(cut.choices[0]!.text, full.slice(0, full.indexOf(stop)));
  assert.equal(cut.choices[0]!.finish_reason, 'stop');
  assert.equal((cut.choices[0] as unknown as { stop_reason: string }).stop_reason, stop);
});

test('a burst of 8 concurrent requests is answered in fewer engine calls than requests', async () => {
  const before = { ...server.stats };
  let open!: () => void;
  gate = new Promise((resolve) => (open = resolve));
  const burst = Array.from({ length: 8 }, (_, k) => client.completions.create({ model: 'solver', prompt: `Problem ${k}: 1 + ${k} =`, max_tokens: 6, temperature: 0.7 }).withResponse());
  // The first request's engine call waits until all 8 have reached the server: the other 7 gather meanwhile.
  while (server.stats.requests < before.requests + 8) await new Promise((r) => setTimeout(r, 5));
  gate = null;
  open();
  const replies = await Promise.all(burst);
  for (const { data } of replies) {
    assert.equal(data.choices.length, 1);
    assert.ok(data.usage!.completion_tokens > 0);
  }
  const calls = server.stats.engineCalls - before.engineCalls;
  const batched = replies.map(({ response }) => Number(response.headers.get('x-marft-batch-requests')));
  assert.ok(calls < 8, `${calls} engine calls for 8 requests`);
  assert.ok(Math.max(...batched) >= 2, `requests per engine call: ${batched}`);
  console.log(`burst: 8 requests in ${calls} engine calls (requests per call: ${batched.join(' ')})`);
});

/** A raw request, for what the openai client would not send. */
async function raw(path: string, init: { method?: string; body?: string } = {}): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null } }> {
  const res = await fetch(server.url + path, { method: init.method ?? 'POST', headers: { 'content-type': 'application/json' }, body: init.body });
  return { status: res.status, ...((await res.json()) as { error: never }) };
}

async function stillServes(): Promise<void> {
  const ok = await client.chat.completions.create({ model: 'planner', messages: question, max_tokens: 3, temperature: 0 });
  assert.equal(ok.choices.length, 1);
}

test('errors come in OpenAI\'s shape and the server keeps serving after each', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'nobody', messages: question }), (err: InstanceType<typeof OpenAI.NotFoundError>) => {
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.equal(err.param, 'model');
    assert.match(err.message, /nobody.*does not exist.*base, planner, solver/);
    return true;
  });
  await stillServes();

  const malformed = await raw('/v1/chat/completions', { body: '{"model": "planner", "messages": [' });
  assert.equal(malformed.status, 400);
  assert.equal(malformed.error.type, 'invalid_request_error');
  assert.equal(malformed.error.code, 'invalid_json');
  await stillServes();

  const long = Array.from({ length: 2100 }, (_, i) => 10 + (i % 50));
  await assert.rejects(client.completions.create({ model: 'solver', prompt: long, max_tokens: 4 }), (err: InstanceType<typeof OpenAI.BadRequestError>) => {
    assert.equal(err.status, 400);
    assert.equal(err.code, 'context_length_exceeded');
    assert.match(err.message, /maximum context length is 2048 tokens/);
    return true;
  });
  await assert.rejects(client.completions.create({ model: 'solver', prompt: long.slice(0, 2040), max_tokens: 20 }), (err: InstanceType<typeof OpenAI.BadRequestError>) => err.status === 400 && err.code === 'context_length_exceeded' && /2060 tokens \(2040 in the prompt, 20 for the completion\)/.test(err.message));
  await stillServes();

  const big = await raw('/v1/completions', { body: JSON.stringify({ model: 'solver', prompt: 'x'.repeat(2 << 20) }) });
  assert.equal(big.status, 413);
  assert.equal(big.error.code, 'request_too_large');
  await stillServes();

  assert.equal((await raw('/v1/embeddings')).status, 404);
  assert.equal((await raw('/v1/completions', { method: 'GET' })).status, 405);
  const badTemperature = await raw('/v1/completions', { body: JSON.stringify({ model: 'solver', prompt: 'x', temperature: 'hot' }) });
  assert.deepEqual([badTemperature.status, badTemperature.error.param], [400, 'temperature']);
  const penalty = await raw('/v1/completions', { body: JSON.stringify({ model: 'solver', prompt: 'x', presence_penalty: 0.5 }) });
  assert.deepEqual([penalty.status, penalty.error.code], [400, 'unsupported_parameter']);
  const badToken = await raw('/v1/completions', { body: JSON.stringify({ model: 'solver', prompt: [1, 2, 99999] }) });
  assert.deepEqual([badToken.status, badToken.error.param], [400, 'prompt']);
  const noMessages = await raw('/v1/chat/completions', { body: JSON.stringify({ model: 'solver' }) });
  assert.deepEqual([noMessages.status, noMessages.error.param], [400, 'messages']);
  await stillServes();

  failNext = true;
  const failed = await raw('/v1/completions', { body: JSON.stringify({ model: 'solver', prompt: 'x', max_tokens: 2 }) });
  assert.equal(failed.status, 500);
  assert.equal(failed.error.type, 'server_error');
  assert.match(failed.error.message, /injected engine failure/);
  await stillServes();
});
