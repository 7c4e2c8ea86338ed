// The project's own OpenAI-compatible engine (src/engine/openai/) pointed at marft serve reproduces the
// embedded engine it serves: greedy and seeded samples (several prompts in one request, stop tokens
// included) are the embedded engine's tokens and log-probs exactly (the server answers a seeded request
// with an engine call of its own, the same call the embedded engine makes here), and `score` (vLLM's
// prompt_logprobs) gives the embedded engine's log-probs; the served agents are reached as adapters.
// marft eval on the served base through model.engine openai gives the embedded engine's evaluation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiSamplingEngine, type PolicyTarget, type SampleParams } from '../../src/engine/index.ts';
import { openServedRun, type ServedRun } from '../../src/serve/served-run.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { makeTinyRun, type TinyRun } from './tiny-run.ts';

let dir = '';
let run: TinyRun;
let served: ServedRun;
let server: RunningServer;
let remote: OpenAiSamplingEngine;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'marft-serve-engine-'));
  run = await makeTinyRun(dir, { seed: 4 });
  served = await openServedRun(run.runDir, { team: false });
  server = await startServer({ engine: served.engine, models: served.models, tokenizer: served.tokenizer, host: '127.0.0.1', port: 0 });
  remote = await OpenAiSamplingEngine.open({ baseUrl: server.baseUrl, model: 'base', adapters: { 'policy-planner': 'planner', 'policy-solver': 'solver' }, modelDir: run.modelDir });
});

after(async () => {
  await server?.close();
  await served?.engine.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const targets: PolicyTarget[] = [{ kind: 'base' }, { kind: 'adapter', name: 'policy-planner' }, { kind: 'adapter', name: 'policy-solver' }];

function prompts(): number[][] {
  const tok = served.tokenizer!;
  return [
    tok.encodeChat([{ role: 'user', content: 'What is 7 times 6?' }], { addGenerationPrompt: true }),
    tok.encode('The answer is'),
    tok.encodeChat([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Name a prime.' }], { addGenerationPrompt: true }),
  ];
}

test('the OpenAI engine reports the served model\'s context and the folder\'s vocabulary', () => {
  assert.equal(remote.info.contextLength, 2048);
  assert.equal(remote.info.vocabSize, served.engine.info.vocabSize);
});

test('greedy and seeded samples through the server are the embedded engine\'s, token for token and log-prob for log-prob', async () => {
  const eos = [...served.tokenizer!.eosTokenIds];
  const cases: SampleParams[] = [
    { temperature: 0, topP: 1, topK: 0, maxNewTokens: 16, stopTokenIds: eos, stopStrings: [], seed: 0 },
    { temperature: 1, topP: 1, topK: 0, maxNewTokens: 16, stopTokenIds: eos, stopStrings: [], seed: 1234 },
    { temperature: 0.7, topP: 0.9, topK: 20, maxNewTokens: 16, stopTokenIds: eos, stopStrings: [], seed: 99 },
    // A stop token the model reaches often (a space): samples end at it, as in the embedded engine.
    { temperature: 1.2, topP: 1, topK: 0, maxNewTokens: 16, stopTokenIds: [...eos, served.tokenizer!.encode(' ')[0]!], stopStrings: [], seed: 7 },
  ];
  let tokens = 0;
  for (const params of cases) {
    for (const target of targets) {
      const embedded = await served.engine.sample(target, prompts(), params);
      const viaServer = await remote.sample(target, prompts(), params);
      const what = `${JSON.stringify(target)} T=${params.temperature} seed=${params.seed}`;
      assert.deepEqual(viaServer.map((r) => r.tokens), embedded.map((r) => r.tokens), what);
      assert.deepEqual(viaServer.map((r) => r.logprobs), embedded.map((r) => r.logprobs), what);
      assert.deepEqual(viaServer.map((r) => r.stopReason), embedded.map((r) => r.stopReason), what);
      tokens += embedded.reduce((s, r) => s + r.tokens.length, 0);
    }
  }
  // A seed changes the samples (the comparison above is not of constant outputs).
  const [a, b] = [await remote.sample(targets[1]!, prompts(), cases[1]!), await remote.sample(targets[1]!, prompts(), { ...cases[1]!, seed: 1235 })];
  assert.notDeepEqual(a.map((r) => r.tokens), b.map((r) => r.tokens));
  console.log(`openai engine via marft serve: ${tokens} sampled tokens equal to the embedded engine's`);
});

test('score through the server (prompt log-probs) is the embedded engine\'s', async () => {
  // The OpenAI engine scores one sequence per request, from its first token: the engine's products run
  // over other row counts than one call of all three, so the float32 sums may differ in their last bits.
  const batch = prompts().map((tokens) => ({ tokens, scoreFrom: 3 }));
  let worst = 0;
  for (const target of targets) {
    const embedded = await served.engine.score(target, batch);
    const viaServer = await remote.score(target, batch);
    assert.deepEqual(viaServer.map((r) => r.length), embedded.map((r) => r.length));
    viaServer.forEach((row, b) => row.forEach((x, k) => (worst = Math.max(worst, Math.abs(x - embedded[b]![k]!)))));
  }
  assert.ok(worst < 1e-5, `largest difference ${worst}`);
  console.log(`score via marft serve: largest difference from the embedded engine ${worst}`);
});

test('marft eval --base with model.engine openai at the server gives the embedded engine\'s evaluation', { timeout: 120_000 }, async () => {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify(run.config));
  const evalBase = async (sets: string[]): Promise<unknown> => {
    const r = await runCli({ args: ['eval', config, '--base', ...sets.flatMap((s) => ['--set', s])] });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  };
  const embedded = await evalBase([]);
  const viaServer = await evalBase(['model.engine=openai', `model.url=${server.baseUrl}`, 'model.servedModel=base']);
  assert.deepEqual(viaServer, embedded);
  assert.equal((embedded as { problems: number }).problems, 2);
});
