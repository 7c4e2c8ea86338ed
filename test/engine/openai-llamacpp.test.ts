// The OpenAI-compatible sampling engine (src/engine/openai/) against llama.cpp's two real servers on
// this machine's CPU, both serving a float32 GGUF of a tiny random Qwen3 written by
// scripts/make-tiny-model.ts and converted by scripts/hf-to-gguf.py, checked against the embedded
// engine on the same folder:
//   - llama.cpp's own llama-server (token-id prompts, token ids in its log-probs): greedy samples token
//     for token with their log-probs, a stop at the model's eos and at a stop token id the server does
//     not know, seeded sampling reproducible; `score` refused in one line (no prompt log-probs).
//   - llama-cpp-python's llama_cpp.server (text prompts only, tokens named by text): it serves the same
//     model (its greedy text is the embedded engine's, decoded), and the engine refuses both `sample`
//     and `score` in one line.
//
// Both servers are optional: `bash scripts/setup.sh --llamacpp` builds them into .venv-llamacpp (about
// 13 minutes of compiling here). Without it this test skips, in CI too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, type Engine, type SampleParams } from '../../src/engine/index.ts';
import { OpenAiSamplingEngine } from '../../src/engine/openai/engine.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { loadTokenizer } from '../../src/tokenizer/index.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.ts';

const python = join(repoRoot, '.venv-llamacpp/bin/python');
const llamaServer = join(repoRoot, '.venv-llamacpp/bin/llama-server');
const skip = !existsSync(python) || !existsSync(llamaServer) ? `no ${existsSync(python) ? llamaServer : python}: bash scripts/setup.sh --llamacpp builds llama.cpp's servers for this test` : false;

// Both servers run with float32 KV caches and without flash attention. With llama.cpp's defaults the
// log-probs move away from the embedded engine's: 1.5e-4 measured here for llama-server (flash
// attention, on by default on this CPU; the cache type made no difference with it on) and 5.3e-5 for
// llama_cpp.server (its f16 KV cache). So set, the largest differences over the log-probs below are
// 4.7e-7 (llama-server) and 3.4e-7 (llama_cpp.server): float32 both, different summation orders.
// 1e-5 leaves room for another CPU's kernels and still fails on either default.
const TOLERANCE = 1e-5;

const work = skip ? '' : tempDir('openai-llamacpp');
const servers: TestServer[] = [];
let native: OpenAiSamplingEngine; // llama-server
let textOnly: OpenAiSamplingEngine; // llama_cpp.server
let textOnlyUrl = '';
let embedded: Engine;
let model = '';
// The eos written into the folder: a token greedy decoding of eosPrompt reaches after others (a tiny
// random model mostly repeats a prompt's last token; from [9, 10] it moves on after a few).
const eosPrompt = [9, 10];
let eos = -1;

const greedy: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 8, stopTokenIds: [], stopStrings: [], seed: 1 };

/** The first token of `tokens` at index `from` or later that does not occur before it. */
function firstNewToken(tokens: number[], from: number): number {
  const k = tokens.findIndex((t, i) => i >= from && !tokens.slice(0, i).includes(t));
  assert.ok(k >= 0, `no new token after index ${from} in ${tokens}`);
  return tokens[k]!;
}

/** A server started in its own process group (test-server.ts), answering `readyUrl`, opened as an engine. */
async function start(server: Omit<TestServerOptions, 'timeoutMs'>, baseUrl: string): Promise<OpenAiSamplingEngine> {
  servers.push(await startTestServer({ ...server, timeoutMs: 60_000 }));
  return OpenAiSamplingEngine.open({ baseUrl, model: 'tiny', modelDir: model });
}

before(async () => {
  if (skip) return;
  model = join(work, 'model');
  execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', model, '--seed', '3'], { cwd: repoRoot });
  // Make the eos a token greedy decoding reaches, so the server's own end-of-generation stop runs.
  const probe = await loadEngine(model);
  eos = firstNewToken((await probe.sample({ kind: 'base' }, [eosPrompt], greedy))[0]!.tokens, 1);
  await probe.dispose();
  for (const file of ['config.json', 'generation_config.json']) {
    const config = JSON.parse(readFileSync(join(model, file), 'utf8')) as { eos_token_id: number[] };
    writeFileSync(join(model, file), JSON.stringify({ ...config, eos_token_id: [eos, 2] }, null, 2));
  }
  embedded = await loadEngine(model);
  const gguf = join(work, 'model.gguf');
  execFileSync(python, [join(repoRoot, 'scripts/hf-to-gguf.py'), model, gguf]);
  const [p1, p2] = [await freePort(), await freePort()];
  // llama-server's /health answers 503 while it loads the model and 200 once it serves.
  native = await start({ what: 'llama-server', python, program: llamaServer, readyUrl: `http://127.0.0.1:${p1}/health`,
    args: ['-m', gguf, '--alias', 'tiny', '--host', '127.0.0.1', '--port', String(p1), '-c', '512', '-t', '1', '-np', '1', '--cache-type-k', 'f32', '--cache-type-v', 'f32', '-fa', 'off'] }, `http://127.0.0.1:${p1}/v1`);
  textOnlyUrl = `http://127.0.0.1:${p2}/v1`;
  textOnly = await start({ what: 'llama_cpp.server', python, readyUrl: `${textOnlyUrl}/models`,
    args: ['-m', 'llama_cpp.server', '--model', gguf, '--model_alias', 'tiny', '--host', '127.0.0.1', '--port', String(p2),
      '--n_ctx', '512', '--n_threads', '1', '--n_threads_batch', '1', '--type_k', '0', '--type_v', '0', '--flash_attn', 'False', '--verbose', 'False'] }, textOnlyUrl);
});

after(async () => {
  for (const s of servers) await s.stop();
  await embedded?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('llama-server: what the server reports (context length from /v1/models, its -c), vocabulary and eos from the folder', { skip }, () => {
  assert.deepEqual(native.info, { vocabSize: 105, contextLength: 512, bosTokenId: null, eosTokenIds: [eos, 2] });
});

test('llama-server: greedy samples equal the embedded engine token for token, stopping at the eos and at a stop token id, log-probs within 1e-5', { skip, timeout: 60_000 }, async () => {
  const prompts = [[5, 6, 7, 8], eosPrompt, [44]];
  // The folder's eos ends generation on the server by itself (llama.cpp's end-of-generation tokens); the
  // embedded engine is told it.
  const atEos = { ...greedy, stopTokenIds: [eos, 2] };
  const [a, b] = [await native.sample({ kind: 'base' }, prompts, atEos), await embedded.sample({ kind: 'base' }, prompts, atEos)];
  assert.deepEqual(a.map((r) => r.tokens), b.map((r) => r.tokens));
  assert.deepEqual(a.map((r) => r.stopReason), b.map((r) => r.stopReason));
  assert.deepEqual(a.map((r) => r.stopReason), ['max_tokens', 'stop_token', 'max_tokens']);
  assert.equal(a[1]!.tokens.at(-1), eos);
  // A stop token id llama-server has no parameter for: it generates past it (8 tokens) and the engine
  // cuts after it, as the embedded engine stops there.
  const stop = a[0]!.tokens[0]!;
  const atStop = { ...atEos, stopTokenIds: [...atEos.stopTokenIds, stop] };
  const [c, d] = [await native.sample({ kind: 'base' }, [prompts[0]!], atStop), await embedded.sample({ kind: 'base' }, [prompts[0]!], atStop)];
  assert.deepEqual(c[0]!.tokens, d[0]!.tokens);
  assert.deepEqual(c[0]!.tokens, [stop]);
  assert.equal(c[0]!.stopReason, 'stop_token');
  let diff = 0;
  [...a, ...c].forEach((r, i) => r.logprobs.forEach((x, k) => { diff = Math.max(diff, Math.abs(x - [...b, ...d][i]!.logprobs[k]!)); }));
  assert.ok(diff < TOLERANCE, `max |llama-server − embedded| = ${diff}`);
});

test('llama-server: a seed reproduces a sample at temperature 1', { skip, timeout: 60_000 }, async () => {
  const hot = { ...greedy, temperature: 1, seed: 7 };
  const [c, d] = [await native.sample({ kind: 'base' }, [[5, 6, 7, 8]], hot), await native.sample({ kind: 'base' }, [[5, 6, 7, 8]], hot)];
  assert.deepEqual(c[0]!.tokens, d[0]!.tokens);
  assert.equal(c[0]!.logprobs.length, c[0]!.tokens.length);
});

test('llama-server: score is refused in one line (its completions carry no prompt log-probs)', { skip }, async () => {
  await assert.rejects(native.score({ kind: 'base' }, [{ tokens: [5, 6, 7, 8], scoreFrom: 1 }]), (err: Error) => {
    assert.match(err.message, /^http:\/\/127\.0\.0\.1:\d+\/v1 cannot score a given sequence: its completions carry no prompt log-probs/);
    assert.ok(!err.message.includes('\n'), err.message);
    return true;
  });
});

test('llama-cpp-python server: serves the same model (its greedy text is the embedded engine\'s), yet sample and score are refused in one line (text prompts only)', { skip, timeout: 60_000 }, async () => {
  assert.deepEqual(textOnly.info.contextLength, 8192); // /v1/models reports none: the folder's
  const tokenizer = loadTokenizer(model);
  const prompt = [44, 45, 50];
  const [want] = await embedded.sample({ kind: 'base' }, [prompt], greedy);
  // Its own request shape: a text prompt, and its sampling defaults (top_k 40, min_p 0.05, repeat_penalty 1.1) turned off.
  const res = await fetch(`${textOnlyUrl}/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', prompt: tokenizer.decode(prompt), max_tokens: greedy.maxNewTokens, temperature: 0, top_k: 0, min_p: 0, repeat_penalty: 1, logprobs: 1 }),
  });
  const reply = await res.json() as { choices: { text: string; logprobs: { token_logprobs: number[] } }[] };
  assert.equal(reply.choices[0]!.text, tokenizer.decode(want!.tokens));
  const got = reply.choices[0]!.logprobs.token_logprobs;
  assert.equal(got.length, want!.logprobs.length);
  const diff = Math.max(...got.map((x, k) => Math.abs(x - want!.logprobs[k]!)));
  assert.ok(diff < TOLERANCE, `max |llama_cpp.server − embedded| = ${diff}`);

  const oneLine = (pattern: RegExp) => (err: Error): boolean => {
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes('\n'), err.message);
    return true;
  };
  await assert.rejects(textOnly.sample({ kind: 'base' }, [prompt], greedy), oneLine(/^http:\/\/127\.0\.0\.1:\d+\/v1 cannot sample token ids: it takes text prompts only/));
  await assert.rejects(textOnly.score({ kind: 'base' }, [{ tokens: prompt, scoreFrom: 1 }]), oneLine(/^http:\/\/127\.0\.0\.1:\d+\/v1 cannot score a given sequence: it takes text prompts only/));
});
