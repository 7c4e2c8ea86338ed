// One scenario of test/engine/determinism.test.ts, run as the first engine work of a fresh process
// (the state that matters here is the process's, so each scenario needs a process of its own):
//   node --import tsx test/engine/determinism-child.ts sample-twice | second-engine
// Prints one JSON line: the two runs' results and the thread setup they ran under (OpenBLAS's thread
// count before the first product and after the runs, the pool's threads).
import { createEngine, tinyDecoderConfig } from '../../src/engine/index.ts';
import type { SampleParams } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { blasInfo } from '../../src/engine/embedded/blas.ts';
import { poolThreads } from '../../src/engine/embedded/thread-pool.ts';

// Products of the first layer here (480 rows × 64 × 64) are below the pool's split threshold, so
// they go to OpenBLAS whole, at whatever thread count OpenBLAS has at that moment.
const cfg = tinyDecoderConfig({
  architecture: 'qwen2', vocabSize: 97, hiddenSize: 64, intermediateSize: 128, layers: 2, heads: 4, kvHeads: 2,
  context: 512, bosTokenId: null, eosTokenIds: [],
});
const prompts = Array.from({ length: 4 }, (_, b) => Array.from({ length: 120 }, (_, i) => ((i * 31 + b * 17) % 90) + 3));
const sampling: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 16, stopTokenIds: [], stopStrings: [], seed: 7 };
const lora = { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] };

/** One engine: sample twice with the same seed. */
async function sampleTwice(): Promise<unknown[]> {
  const e = createEngine(cfg, { seed: 3 });
  const first = await e.sample({ kind: 'base' }, prompts, sampling);
  const second = await e.sample({ kind: 'base' }, prompts, sampling);
  await e.dispose();
  return [first, second];
}

/** A fresh engine's log-probs, gradient norm and updated log-probs after one adapter step. */
async function oneStep(): Promise<unknown> {
  const e = createEngine(cfg, { seed: 3 });
  await e.createAdapter('p', lora, 5);
  const target = { kind: 'adapter' as const, name: 'p' };
  const batch = prompts.map((tokens) => ({ tokens, scoreFrom: 60 }));
  const g = await e.forward(target, batch, { retainGraph: true });
  await e.backward(g.handle!, { dLogprobs: g.logprobs!.map((x) => new Float32Array(x.length).fill(0.01)) });
  const st = await e.optimStep(target, { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 });
  const after = await e.forward(target, batch, {});
  await e.dispose();
  return { logprobs: g.logprobs!.map((x) => Array.from(x)), gradNorm: st.gradNorm, after: after.logprobs!.map((x) => Array.from(x)) };
}

const scenario = process.argv[2];
const blasThreadsAtStart = blasInfo().threads;
let runs: unknown[];
if (scenario === 'sample-twice') runs = await sampleTwice();
else if (scenario === 'second-engine') runs = [await oneStep(), await oneStep()];
else throw new Error(`unknown scenario '${scenario}' (sample-twice, second-engine)`);
console.log(JSON.stringify({ runs, backend: blasInfo().backend, poolThreads: poolThreads(), blasThreadsAtStart, blasThreads: blasInfo().threads }));
