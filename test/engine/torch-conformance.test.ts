// The torch engine against the embedded engine on the CPU, float32, on the tiny random checkpoints of
// the oracle tests (Qwen2 tied with q/k/v biases, Qwen3 untied with q/k norms, Llama untied): per-token
// log-probs (base, a non-zero PEFT adapter, temperature), critic values (LoRA critic and MLP critic
// made from the same seed), one AdamW step of an adapter and of each critic after a backward from the
// same per-token weights, optimiser state carried from one engine to the other, and greedy sampling.
// Issue 11: within 1e-4. Files written by one engine are read by the other.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { loadBaseDir } from '../../src/engine/embedded/engine-io.ts';
import { readPeftAdapter } from '../../src/engine/hf/peft.ts';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';
import { TorchEngine } from '../../src/engine/torch/engine.ts';
import type { Engine, OptimParams, ScoreRequest, Target } from '../../src/engine/types.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, skipWithoutVenv, tempDir, testSequences, type TinyArch } from './oracle-helpers.ts';
import { skipWithoutTorch, torchTestOptions } from './torch-helpers.ts';

const skip = skipWithoutVenv || skipWithoutTorch;
const archs: TinyArch[] = ['qwen2', 'qwen3', 'llama'];
const work = tempDir('torch-conf');
const adapterDir = (arch: TinyArch): string => join(work, `adapter-${arch}`);
const TOL = 1e-4;

const seqs = testSequences(97, [19, 6, 33, 4], 11);
// Ragged prefixes, one request with nothing to score, one scored from its middle.
const batch: ScoreRequest[] = [
  { tokens: seqs[0]!, scoreFrom: 1 }, { tokens: seqs[1]!, scoreFrom: 6 }, { tokens: seqs[2]!, scoreFrom: 9 }, { tokens: seqs[3]!, scoreFrom: 2 },
];
const counts = batch.map((r) => r.tokens.length - r.scoreFrom);
const weights = counts.map((n, b) => Float32Array.from({ length: n }, (_, k) => Math.sin(1 + 3 * b + 0.7 * k)));
// Adam's first step is lr·g/(|g| + eps): near g = 0 it multiplies a gradient's rounding error by up
// to lr/eps. The two engines' gradients agree to ~1e-6 of their norm (float32 sums in other orders;
// the Qwen2 checkpoint's gradient norm is ~1500), so with eps 1e-8 elements that cancel to near zero
// moved up to 4e-4 differently. lr/eps = 10 bounds that amplification, so the comparison tests the
// engines' arithmetic, not float32 rounding; the step still moves weights by ~lr (checked below).
const optim: OptimParams = { lr: 0.01, beta1: 0.9, beta2: 0.99, eps: 1e-3, weightDecay: 0.05, maxGradNorm: 0.5 };

before(() => {
  if (skip) return;
  const ck = checkpointJobs(archs);
  oracleBatch([...ck, ...archs.map((arch, i) => ({ cmd: 'make-lora', model: checkpointDir(arch), out: adapterDir(arch), rank: 4, alpha: 8, seed: 3 + i }))]);
});

function embedded(arch: TinyArch): EmbeddedEngine {
  const { config, weights: w } = loadBaseDir(checkpointDir(arch));
  return new EmbeddedEngine(config, w);
}

/** Largest |a − b| over the same-named tensors of two safetensors files. */
function fileDiff(a: string, b: string): number {
  const ta = readSafetensors(a), tb = readSafetensors(b);
  assert.deepEqual([...ta.keys()].sort(), [...tb.keys()].sort());
  let m = 0;
  for (const [k, t] of ta) m = Math.max(m, maxAbsDiff([t.data], [tb.get(k)!.data]));
  return m;
}

async function both<T>(engines: Engine[], fn: (e: Engine, i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (const [i, e] of engines.entries()) out.push(await fn(e, i));
  return out;
}

for (const arch of archs) {
  test(`torch engine = embedded engine (${arch}): log-probs, values, AdamW updates, files, greedy sampling`, { skip }, async (t) => {
    const emb = embedded(arch);
    // Llama's torch engine scores in chunks of 5 rows (logits recomputed in the backward), the others in one piece.
    const tor = await TorchEngine.load(checkpointDir(arch), { ...torchTestOptions, logitsChunkRows: arch === 'llama' ? 5 : 0 });
    t.after(() => tor.dispose());
    const scored = counts.reduce((a, n) => a + n, 0);
    if (arch === 'llama') assert.equal(tor.workerInfo.logitsChunkRows, 5);
    else assert.ok(tor.workerInfo.logitsChunkRows >= scored, `one chunk: ${tor.workerInfo.logitsChunkRows} rows`);
    const engines: Engine[] = [emb, tor];
    const dir = (name: string, i: number): string => join(work, `${arch}-${name}-${i === 0 ? 'embedded' : 'torch'}`);
    await both(engines, (e) => e.loadAdapter('p', adapterDir(arch)));
    await both(engines, (e) => e.createCritic('lc', { kind: 'lora-critic', lora: { rank: 3, alpha: 6, targetModules: ['q_proj', 'v_proj', 'down_proj'] } }, 5));
    await both(engines, (e) => e.createCritic('mlp', { kind: 'mlp', hidden: [16, 8] }, 6));
    assert.deepEqual(await tor.listAdapters(), ['p']);

    await t.test('log-probs of the base and of the adapter, at temperature 1 and 0.7', async () => {
      for (const target of [{ kind: 'base' }, { kind: 'adapter', name: 'p' }] as Target[]) {
        for (const temperature of [1, 0.7]) {
          const [a, b] = await both(engines, (e) => e.forward(target, batch, { temperature }));
          assert.deepEqual(b!.logprobs!.map((x) => x.length), counts);
          const d = maxAbsDiff(a!.logprobs!, b!.logprobs!);
          assert.ok(d < TOL, `${target.kind} T=${temperature}: max |Δ logprob| = ${d}`);
        }
      }
    });

    await t.test('critic values (LoRA critic, MLP critic) from the same seed', async () => {
      for (const name of ['lc', 'mlp']) {
        const [a, b] = await both(engines, (e) => e.forward({ kind: 'critic', name }, batch));
        const d = maxAbsDiff(a!.values!, b!.values!);
        assert.ok(d < TOL, `${name}: max |Δ value| = ${d}`);
      }
    });

    await t.test('one AdamW step of the adapter after the same backward; the torch-saved adapter loads in the embedded engine', async () => {
      const norms = await both(engines, async (e) => {
        const f = await e.forward({ kind: 'adapter', name: 'p' }, batch, { retainGraph: true });
        await e.backward(f.handle!, { dLogprobs: weights });
        return (await e.optimStep({ kind: 'adapter', name: 'p' }, optim)).gradNorm;
      });
      assert.ok(norms[0]! > optim.maxGradNorm, `the step clips (norm ${norms[0]})`);
      assert.ok(Math.abs(norms[0]! - norms[1]!) < TOL * norms[0]!, `grad norms ${norms[0]} vs ${norms[1]}`);
      await both(engines, (e, i) => e.saveAdapter('p', dir('p', i)));
      const d = fileDiff(join(dir('p', 0), 'adapter_model.safetensors'), join(dir('p', 1), 'adapter_model.safetensors'));
      assert.ok(d < TOL, `adapter after one step: max |Δ weight| = ${d}`);
      assert.ok(fileDiff(join(dir('p', 1), 'adapter_model.safetensors'), join(adapterDir(arch), 'adapter_model.safetensors')) > 1e-3, 'the step moved the weights');
      assert.deepEqual(readPeftAdapter(dir('p', 1)).config, readPeftAdapter(dir('p', 0)).config);
      await emb.loadAdapter('from-torch', dir('p', 1));
      const a = await emb.forward({ kind: 'adapter', name: 'from-torch' }, batch);
      const b = await tor.forward({ kind: 'adapter', name: 'p' }, batch);
      assert.ok(maxAbsDiff(a.logprobs!, b.logprobs!) < TOL);
      await emb.deleteAdapter('from-torch');
    });

    await t.test('optimiser state saved by the torch engine resumes in the embedded engine (second step agrees)', async () => {
      const file = join(work, `${arch}-adam.bin`);
      await tor.saveOptimizerState({ kind: 'adapter', name: 'p' }, file);
      await emb.loadOptimizerState({ kind: 'adapter', name: 'p' }, file);
      await both(engines, async (e) => {
        const f = await e.forward({ kind: 'adapter', name: 'p' }, batch, { retainGraph: true });
        await e.backward(f.handle!, { dLogprobs: weights.map((w) => w.map((x) => -x)) });
        await e.optimStep({ kind: 'adapter', name: 'p' }, optim);
      });
      await both(engines, (e, i) => e.saveAdapter('p', dir('p2', i)));
      const d = fileDiff(join(dir('p2', 0), 'adapter_model.safetensors'), join(dir('p2', 1), 'adapter_model.safetensors'));
      assert.ok(d < TOL, `adapter after the second step: max |Δ weight| = ${d}`);
    });

    await t.test('one AdamW step of each critic (LoRA critic: adapter and head; MLP critic: head only)', async () => {
      for (const name of ['lc', 'mlp']) {
        await both(engines, async (e) => {
          const f = await e.forward({ kind: 'critic', name }, batch, { retainGraph: true });
          await e.backward(f.handle!, { dValues: weights });
          await e.optimStep({ kind: 'critic', name }, optim);
        });
        await both(engines, (e, i) => e.saveCritic(name, dir(name, i)));
        const d = fileDiff(join(dir(name, 0), 'value_head.safetensors'), join(dir(name, 1), 'value_head.safetensors'));
        assert.ok(d < TOL, `${name} head after one step: max |Δ| = ${d}`);
        if (name === 'lc') {
          const dl = fileDiff(join(dir(name, 0), 'adapter_model.safetensors'), join(dir(name, 1), 'adapter_model.safetensors'));
          assert.ok(dl < TOL, `${name} adapter after one step: max |Δ| = ${dl}`);
        }
        const [a, b] = await both(engines, (e) => e.forward({ kind: 'critic', name }, batch));
        assert.ok(maxAbsDiff(a!.values!, b!.values!) < TOL);
      }
    });

    await t.test('greedy sampling gives the same tokens, log-probs and stop reasons', async () => {
      await both(engines, (e) => e.loadAdapter('fresh', adapterDir(arch))); // the trained 'p' differ by rounding
      const prompts = [seqs[0]!.slice(0, 5), seqs[2]!.slice(0, 9), [7]];
      const params = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 6, stopTokenIds: [] as number[], stopStrings: [], seed: 1 };
      const [free] = await both([emb], (e) => e.sample({ kind: 'adapter', name: 'fresh' }, prompts, params));
      params.stopTokenIds = [free![1]!.tokens[3]!]; // the second prompt then stops on a token, the others may too
      const [a, b] = await both(engines, (e) => e.sample({ kind: 'adapter', name: 'fresh' }, prompts, params));
      assert.equal(a![1]!.stopReason, 'stop_token');
      assert.deepEqual(b!.map((r) => r.tokens), a!.map((r) => r.tokens));
      assert.deepEqual(b!.map((r) => r.stopReason), a!.map((r) => r.stopReason));
      const d = maxAbsDiff(a!.map((r) => r.logprobs), b!.map((r) => r.logprobs));
      assert.ok(d < TOL, `max |Δ logprob| = ${d}`);
    });
  });
}
