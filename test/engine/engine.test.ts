// Behaviour of the EmbeddedEngine through the Engine interface on small random models (no Python):
// sampling (reproducible, batch-independent, stop conditions, log-probs consistent with scoring),
// gradient accumulation, optimiser-state resume, several adapters, training from scratch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import type { Engine, ModelConfig, SampleParams } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { namedParams } from '../../src/engine/embedded/weights.ts';
import { maxAbsDiff, spreadWeights, tempDir } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen2', vocabSize: 50, hiddenSize: 32, intermediateSize: 64, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 128, tieWordEmbeddings: false,
  attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [1],
};
const lora = { rank: 4, alpha: 8, targetModules: [...ALL_LINEAR_MODULES] };
const sampling: SampleParams = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 12, stopTokenIds: [], stopStrings: [], seed: 42 };
const prompts = [[3, 4, 5], [7], [9, 10, 11, 12, 13, 14]];

function engine(seed = 1, decode?: (ids: number[]) => string): EmbeddedEngine {
  return new EmbeddedEngine(cfg, spreadWeights(cfg, seed), decode ? { decode } : {});
}

test('sampling is reproducible from the seed and independent of the rest of the batch', async () => {
  const e = engine();
  const a = await e.sample({ kind: 'base' }, prompts, sampling);
  const b = await e.sample({ kind: 'base' }, prompts, sampling);
  assert.deepEqual(a, b);
  const alone = await e.sample({ kind: 'base' }, [prompts[0]!], sampling);
  assert.deepEqual(alone[0]!.tokens, a[0]!.tokens);
  assert.ok(maxAbsDiff([alone[0]!.logprobs], [a[0]!.logprobs]) < 1e-5);
  const other = await e.sample({ kind: 'base' }, prompts, { ...sampling, seed: 43 });
  assert.notDeepEqual(other.map((r) => r.tokens), a.map((r) => r.tokens));
  for (const r of a) {
    assert.equal(r.tokens.length, 12);
    assert.equal(r.stopReason, 'max_tokens');
    for (const t of r.tokens) assert.ok(t >= 0 && t < cfg.vocabSize);
  }
});

test('sampled log-probs equal a scoring forward at the same temperature (KV cache agrees with a full pass)', async () => {
  const e = engine(2);
  for (const temperature of [1, 0.7]) {
    const out = await e.sample({ kind: 'base' }, prompts, { ...sampling, temperature });
    const scored = await e.forward({ kind: 'base' }, prompts.map((p, b) => ({ tokens: [...p, ...out[b]!.tokens], scoreFrom: p.length })), { temperature });
    const diff = maxAbsDiff(scored.logprobs!, out.map((r) => r.logprobs));
    assert.ok(diff < 1e-4, `T=${temperature}: max diff ${diff}`);
  }
});

test('top-k 1 equals greedy; stop tokens and stop strings end a sequence and are reported', async () => {
  const decode = (ids: number[]): string => ids.map((i) => String.fromCharCode(97 + (i % 26))).join('');
  const e = engine(3, decode);
  const greedy = await e.sample({ kind: 'base' }, prompts, { ...sampling, temperature: 0 });
  const top1 = await e.sample({ kind: 'base' }, prompts, { ...sampling, topK: 1 });
  assert.deepEqual(top1.map((r) => r.tokens), greedy.map((r) => r.tokens));
  for (const r of top1) for (const lp of r.logprobs) assert.ok(Math.abs(lp) < 1e-6, 'top-1 draws have probability 1');
  const stopAt = greedy[2]!.tokens[4]!;
  const firstAt = greedy[2]!.tokens.indexOf(stopAt);
  const stopped = await e.sample({ kind: 'base' }, [prompts[2]!], { ...sampling, temperature: 0, stopTokenIds: [stopAt] });
  assert.deepEqual(stopped[0]!.tokens, greedy[2]!.tokens.slice(0, firstAt + 1));
  assert.equal(stopped[0]!.stopReason, 'stop_token');
  const text = decode(greedy[0]!.tokens.slice(2, 4));
  const byString = await e.sample({ kind: 'base' }, [prompts[0]!], { ...sampling, temperature: 0, stopStrings: [text] });
  assert.equal(byString[0]!.stopReason, 'stop_string');
  assert.ok(decode(byString[0]!.tokens).endsWith(text));
  assert.ok(byString[0]!.tokens.length <= 4);
});

test('gradient accumulation over micro-batches equals one backward over the whole batch', async () => {
  const seqs = [[1, 2, 3, 4, 5, 6], [7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17]].map((tokens) => ({ tokens, scoreFrom: 2 }));
  const grads = seqs.map((s) => Float32Array.from({ length: s.tokens.length - 2 }, (_, k) => Math.cos(k + s.tokens.length)));
  const whole = engine(4);
  await whole.createAdapter('a', lora, 1);
  whole.getAdapter('a').layers.forEach((l) => Object.values(l).forEach((m) => m.B.data.forEach((_, i, a) => { a[i] = 0.05 * Math.sin(i); })));
  const split = engine(4);
  split.putAdapter('a', structuredClone(whole.getAdapter('a')));
  const f = await whole.forward({ kind: 'adapter', name: 'a' }, seqs, { retainGraph: true });
  await whole.backward(f.handle!, { dLogprobs: grads });
  for (let i = 0; i < seqs.length; i++) {
    const g = await split.forward({ kind: 'adapter', name: 'a' }, [seqs[i]!], { retainGraph: true });
    await split.backward(g.handle!, { dLogprobs: [grads[i]!] });
  }
  const gw = whole.getAdapter('a').layers.flatMap((l) => Object.values(l).flatMap((m) => [...m.A.grad!, ...m.B.grad!]));
  const gs = split.getAdapter('a').layers.flatMap((l) => Object.values(l).flatMap((m) => [...m.A.grad!, ...m.B.grad!]));
  assert.ok(gw.some((x) => Math.abs(x) > 1e-4));
  assert.ok(maxAbsDiff([gw], [gs]) < 1e-5);
  // A consumed handle cannot be reused.
  await assert.rejects(whole.backward(f.handle!, { dLogprobs: grads }), /consumed/);
});

test('scoring from later tokens (rows gathered and scattered) gives the gradients of scoring every token with zero weight on the prompt', async () => {
  // scoreFrom 1 for every request takes the path where the lm-head reads the hidden state in place;
  // scoreFrom 3 gathers the scored rows in the forward and scatters their gradient in the backward.
  const tokens = [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12]];
  const weights = tokens.map((t) => Float32Array.from({ length: t.length - 3 }, (_, k) => Math.sin(k + t.length)));
  const gradsOf = async (scoreFrom: number): Promise<number[]> => {
    const e = engine(6);
    await e.setBaseTrainable(true);
    const f = await e.forward({ kind: 'base' }, tokens.map((t) => ({ tokens: t, scoreFrom })), { retainGraph: true });
    const dLogprobs = weights.map((w) => (scoreFrom === 1 ? Float32Array.from([0, 0, ...w]) : w));
    await e.backward(f.handle!, { dLogprobs });
    return namedParams(e.model.weights).flatMap(([, p]) => [...(p.grad ?? [])]);
  };
  const all = await gradsOf(1), later = await gradsOf(3);
  assert.ok(all.some((x) => Math.abs(x) > 1e-4));
  assert.ok(maxAbsDiff([all], [later]) < 1e-6, `gradients differ by ${maxAbsDiff([all], [later])}`);
});

async function trainSteps(e: Engine, steps: number): Promise<number[]> {
  const batch = [[1, 2, 3, 4, 5, 6, 7, 8], [2, 3, 4, 5, 6, 7, 8, 9]].map((tokens) => ({ tokens, scoreFrom: 1 }));
  const losses: number[] = [];
  for (let s = 0; s < steps; s++) {
    const f = await e.forward({ kind: 'adapter', name: 'a' }, batch, { retainGraph: true });
    losses.push(-f.logprobs!.reduce((a, lp) => a + lp.reduce((x, y) => x + y, 0), 0));
    await e.backward(f.handle!, { dLogprobs: f.logprobs!.map((lp) => lp.map(() => -1)) });
    await e.optimStep({ kind: 'adapter', name: 'a' }, { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 });
  }
  return losses;
}

test('optimiser state and adapter saved mid-run resume bit-exactly; LoRA training lowers the loss', async () => {
  const dir = tempDir('resume');
  const a = engine(5);
  await a.createAdapter('a', lora, 7);
  const first = await trainSteps(a, 3);
  await a.saveAdapter('a', join(dir, 'adapter'));
  await a.saveOptimizerState({ kind: 'adapter', name: 'a' }, join(dir, 'opt.bin'));
  const cont = await trainSteps(a, 3);
  const b = engine(5);
  await b.loadAdapter('a', join(dir, 'adapter'));
  await b.loadOptimizerState({ kind: 'adapter', name: 'a' }, join(dir, 'opt.bin'));
  const resumed = await trainSteps(b, 3);
  assert.deepEqual(resumed, cont);
  assert.ok(cont[2]! < first[0]! * 0.95, `loss ${first[0]} → ${cont[2]}`);
});

test('several adapters over one base are independent; deleting one keeps the others', async () => {
  const e = engine(6);
  await e.createAdapter('x', lora, 1);
  await e.createAdapter('a', lora, 2);
  assert.deepEqual((await e.listAdapters()).sort(), ['a', 'x']);
  const batch = [{ tokens: [1, 2, 3, 4, 5, 6], scoreFrom: 1 }];
  const base = await e.forward({ kind: 'base' }, batch);
  const x0 = await e.forward({ kind: 'adapter', name: 'x' }, batch);
  assert.ok(maxAbsDiff(base.logprobs!, x0.logprobs!) < 1e-6, 'B = 0 at creation: the adapter starts equal to the base');
  await trainSteps(e, 2);
  const a1 = await e.forward({ kind: 'adapter', name: 'a' }, batch);
  const x1 = await e.forward({ kind: 'adapter', name: 'x' }, batch);
  const base1 = await e.forward({ kind: 'base' }, batch);
  assert.ok(maxAbsDiff(a1.logprobs!, base.logprobs!) > 1e-3, 'training changed adapter a');
  assert.deepEqual(x1.logprobs, x0.logprobs);
  assert.deepEqual(base1.logprobs, base.logprobs);
  await e.deleteAdapter('a');
  assert.deepEqual(await e.listAdapters(), ['x']);
  await assert.rejects(e.forward({ kind: 'adapter', name: 'a' }, batch), /no adapter named 'a'/);
});

test('a tiny model trains from scratch with full-parameter training (createEngine + setBaseTrainable)', async () => {
  const tiny: ModelConfig = { ...cfg, architecture: 'llama', attentionBias: false, tieWordEmbeddings: false, vocabSize: 12 };
  const e = createEngine(tiny, { seed: 3 });
  await e.setBaseTrainable(true);
  // Sequences counting up modulo 10 from a random start: fully predictable after the first token.
  const batch = Array.from({ length: 8 }, (_, b) => ({ tokens: Array.from({ length: 16 }, (_, i) => (b + i) % 10), scoreFrom: 1 }));
  const nll = (lps: Float32Array[]): number => -lps.reduce((a, lp) => a + lp.reduce((x, y) => x + y, 0), 0) / lps.reduce((a, lp) => a + lp.length, 0);
  let first = 0, last = 0;
  for (let s = 0; s < 60; s++) {
    const f = await e.forward({ kind: 'base' }, batch, { retainGraph: true });
    if (s === 0) first = nll(f.logprobs!);
    last = nll(f.logprobs!);
    await e.backward(f.handle!, { dLogprobs: f.logprobs!.map((lp) => lp.map(() => -1 / 120)) });
    const { gradNorm } = await e.optimStep({ kind: 'base' }, { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    assert.ok(Number.isFinite(gradNorm) && gradNorm > 0);
  }
  assert.ok(first > 2.0, `initial loss ${first} should be near ln(12)`);
  assert.ok(last < 0.5, `loss after 60 steps: ${last}`);
  // The trained model continues the pattern greedily.
  const out = await e.sample({ kind: 'base' }, [[3, 4, 5]], { ...sampling, temperature: 0, maxNewTokens: 5 });
  assert.deepEqual(out[0]!.tokens, [6, 7, 8, 9, 0]);
});

test('errors: frozen base backward, bad scoreFrom, unknown critic, stop strings without a decoder', async () => {
  const e = engine(7);
  const f = await e.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 1 }], { retainGraph: true });
  await assert.rejects(e.backward(f.handle!, { dLogprobs: [new Float32Array(2)] }), /frozen/);
  await assert.rejects(e.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 0 }]), /scoreFrom/);
  await assert.rejects(e.forward({ kind: 'base' }, [{ tokens: [1, 99], scoreFrom: 1 }]), /outside the vocabulary/);
  await assert.rejects(e.forward({ kind: 'critic', name: 'nope' }, [{ tokens: [1, 2], scoreFrom: 1 }]), /no critic named/);
  await assert.rejects(e.sample({ kind: 'base' }, [[1]], { ...sampling, stopStrings: ['x'] }), /decode/);
  await assert.rejects(e.forward({ kind: 'base' }, [{ tokens: [1, 2], scoreFrom: 1 }], { temperature: -1 }), /temperature/);
  assert.throws(() => createEngine({ ...cfg, numKeyValueHeads: 3 }, { seed: 0 }), /not a multiple of 3/);
  assert.throws(() => createEngine({ ...cfg, headDim: 7 }, { seed: 0 }), /even/);
});
