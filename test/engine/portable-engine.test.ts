// The engine without BLAS (MARFT_BLAS=portable: the WebAssembly SIMD matrix kernel and the JavaScript
// loops), without WebAssembly (MARFT_SIMD=0: the JavaScript loops for every element-wise pass), and
// without its thread pool (MARFT_THREADS=1), against the engine with OpenBLAS, the SIMD kernels and
// the pool, in child processes: the same log-probs, the same gradient
// (through AdamW's reported gradient norm and the updated log-probs), and the same greedy tokens, on
// a model whose products are large enough for the SIMD kernel's panels (more than 64 rows, 256
// columns, 256 of K) and for attention's causal row blocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const script = `
import { createEngine } from './src/engine/index.ts';
import { blasInfo } from './src/engine/embedded/blas.ts';
import { workersReady } from './src/engine/embedded/thread-pool.ts';
const cfg = { architecture: 'qwen2', vocabSize: 300, hiddenSize: 96, intermediateSize: 272, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 24, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 256, tieWordEmbeddings: false,
  attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [] };
const e = createEngine(cfg, { seed: 3 });
await e.setBaseTrainable(true);
const batch = [0, 1, 2].map((b) => ({ tokens: Array.from({ length: 90 + 7 * b }, (_, i) => (b * 131 + i * 17 + ((i * i) % 13)) % 300), scoreFrom: 5 }));
// With several threads, the first pass starts the pool's workers: wait for them, so that the passes
// below run on them.
await e.forward({ kind: 'base' }, batch, {});
for (let i = 0; i < 400 && process.env.MARFT_THREADS !== '1' && !workersReady(); i++) await new Promise((r) => setTimeout(r, 50));
const f = await e.forward({ kind: 'base' }, batch, { retainGraph: true });
await e.backward(f.handle, { dLogprobs: f.logprobs.map((lp) => lp.map(() => -0.01)) });
const step = await e.optimStep({ kind: 'base' }, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
const after = await e.forward({ kind: 'base' }, batch, {});
const greedy = await e.sample({ kind: 'base' }, [[5, 6, 7, 8]], { temperature: 0, topP: 1, topK: 0, maxNewTokens: 24, stopTokenIds: [], stopStrings: [], seed: 1 });
console.log(JSON.stringify({ backend: blasInfo().backend, pool: workersReady(), before: f.logprobs.map((x) => [...x]), gradNorm: step.gradNorm,
  after: after.logprobs.map((x) => [...x]), greedy: greedy[0].tokens }));
`;

function run(env: Record<string, string>): { backend: string; pool: boolean; before: number[][]; gradNorm: number; after: number[][]; greedy: number[] } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root, env: { ...process.env, ...env }, encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

function maxDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) => row.forEach((x, j) => { m = Math.max(m, Math.abs(x - b[i]![j]!)); }));
  return m;
}

test('without BLAS the engine gives the same log-probs, gradient norm, update and greedy tokens as with OpenBLAS', () => {
  const native = run({});
  const portable = run({ MARFT_BLAS: 'portable' });
  assert.notEqual(native.backend, 'portable', 'OpenBLAS is not loaded here: run scripts/setup.sh');
  assert.equal(portable.backend, 'portable');
  assert.ok(maxDiff(portable.before, native.before) < 1e-4, `log-probs differ by ${maxDiff(portable.before, native.before)}`);
  assert.ok(Math.abs(portable.gradNorm - native.gradNorm) < 1e-4 * native.gradNorm, `gradient norms ${portable.gradNorm} vs ${native.gradNorm}`);
  assert.ok(maxDiff(portable.after, native.after) < 1e-4, 'log-probs after one AdamW step');
  assert.ok(maxDiff(native.after, native.before) > 1e-3, 'the step changed the model');
  assert.deepEqual(portable.greedy, native.greedy);
});

test('without the WebAssembly kernels (MARFT_SIMD=0) the engine gives the same log-probs, gradient norm, update and greedy tokens', () => {
  const simd = run({});
  const loops = run({ MARFT_SIMD: '0' });
  assert.ok(maxDiff(loops.before, simd.before) < 1e-4, `log-probs differ by ${maxDiff(loops.before, simd.before)}`);
  assert.ok(Math.abs(loops.gradNorm - simd.gradNorm) < 1e-4 * simd.gradNorm, `gradient norms ${loops.gradNorm} vs ${simd.gradNorm}`);
  assert.ok(maxDiff(loops.after, simd.after) < 1e-4, 'log-probs after one AdamW step');
  assert.deepEqual(loops.greedy, simd.greedy);
});

test('without the thread pool (MARFT_THREADS=1) the engine gives the same log-probs, gradient norm, update and greedy tokens', () => {
  const pooled = run({ MARFT_THREADS: '2' });
  const single = run({ MARFT_THREADS: '1' });
  assert.equal(pooled.pool, true, 'the pool workers ran the passes');
  assert.equal(single.pool, false);
  assert.ok(maxDiff(single.before, pooled.before) < 1e-5, `log-probs differ by ${maxDiff(single.before, pooled.before)}`);
  assert.ok(Math.abs(single.gradNorm - pooled.gradNorm) < 1e-5 * pooled.gradNorm, `gradient norms ${single.gradNorm} vs ${pooled.gradNorm}`);
  assert.ok(maxDiff(single.after, pooled.after) < 1e-5, 'log-probs after one AdamW step');
  assert.deepEqual(single.greedy, pooled.greedy);
});
