// No leak across 1,000 training steps: resident memory and the JS heap stay flat after warm-up
// (forward with a retained graph → backward → AdamW, LoRA and full training, plus sampling).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createEngine } from '../../src/engine/index.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';

const long = process.env.MARFT_LONG_TESTS !== '0';

const cfg: ModelConfig = {
  architecture: 'qwen2', vocabSize: 64, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 128, tieWordEmbeddings: true,
  attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [1],
};

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('1,000 training steps: resident memory and heap flat after warm-up', { skip: long ? false : 'long test (MARFT_LONG_TESTS=0)' }, async () => {
  const e = createEngine(cfg, { seed: 1 });
  await e.createAdapter('a', { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] }, 1);
  await e.setBaseTrainable(true);
  const batch = Array.from({ length: 4 }, (_, b) => ({ tokens: Array.from({ length: 24 }, (_, i) => (b * 7 + i * 3) % 64), scoreFrom: 4 }));
  const optim = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };
  const measure = (): { rss: number; heap: number } => {
    gc();
    gc(); // array buffers are freed when their wrappers are collected; a second pass catches stragglers
    const m = process.memoryUsage();
    return { rss: m.rss, heap: m.heapUsed + m.arrayBuffers };
  };
  let warm = { rss: 0, heap: 0 };
  for (let step = 1; step <= 1000; step++) {
    const target = step % 2 ? { kind: 'adapter' as const, name: 'a' } : { kind: 'base' as const };
    const f = await e.forward(target, batch, { retainGraph: true });
    await e.backward(f.handle!, { dLogprobs: f.logprobs!.map((lp) => lp.map(() => -0.01)) });
    await e.optimStep(target.kind === 'base' ? target : { kind: 'adapter', name: 'a' }, optim);
    if (step % 100 === 0) await e.sample({ kind: 'adapter', name: 'a' }, [[1, 2, 3], [4]], { temperature: 1, topP: 0.9, topK: 10, maxNewTokens: 8, stopTokenIds: [], stopStrings: [], seed: step });
    if (step === 200) warm = measure();
  }
  const end = measure();
  const mb = (x: number): number => x / 2 ** 20;
  assert.ok(mb(end.heap - warm.heap) < 8, `heap + array buffers grew ${mb(end.heap - warm.heap).toFixed(2)} MB from step 200 to 1000`);
  assert.ok(mb(end.rss - warm.rss) < 30, `resident memory grew ${mb(end.rss - warm.rss).toFixed(2)} MB from step 200 to 1000`);
  console.log(`memory after 200 / 1000 steps: rss ${mb(warm.rss).toFixed(1)} / ${mb(end.rss).toFixed(1)} MB, heap+buffers ${mb(warm.heap).toFixed(2)} / ${mb(end.heap).toFixed(2)} MB`);
});
