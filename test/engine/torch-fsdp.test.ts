// The torch engine in two processes (torchrun, gloo, FSDP2 sharding the base) against one process, on
// the CPU: the same log-probs and values, the same gradient norms and AdamW updates of an adapter, a
// LoRA critic and the full base (gradients summed across ranks, not averaged), the same greedy samples;
// the two processes compute log-probs in chunks of rows (engines/torch/marft_torch/scorer.py).
// Long (two worker starts, one of them torchrun): skipped with MARFT_LONG_TESTS=0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TorchEngine, type TorchEngineOptions } from '../../src/engine/torch/engine.ts';
import { defaultTorchPython, torchPackageDir } from '../../src/engine/torch/worker-process.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';
import type { OptimParams, SampleResult } from '../../src/engine/types.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, skipWithoutVenv, tempDir, testSequences } from './oracle-helpers.ts';
import { skipWithoutTorch, torchTestOptions } from './torch-helpers.ts';

const long = process.env.MARFT_LONG_TESTS !== '0';
const skip = skipWithoutVenv || skipWithoutTorch || (long ? false : 'long test (MARFT_LONG_TESTS=0)');
const TOL = 1e-4;
const torchPython = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
const seqs = testSequences(97, [19, 6, 33, 4, 12], 11);
// Five requests over two ranks: the split is uneven, and one request has nothing to score.
const batch = seqs.map((tokens, i) => ({ tokens, scoreFrom: i === 3 ? 4 : 1 + (i % 3) }));
const weights = batch.map((r, b) => Float32Array.from({ length: r.tokens.length - r.scoreFrom }, (_, k) => Math.sin(1 + 3 * b + 0.7 * k)));
// lr/eps bounded for the reason given in torch-conformance.test.ts.
const optim: OptimParams = { lr: 0.01, beta1: 0.9, beta2: 0.99, eps: 1e-3, weightDecay: 0.05, maxGradNorm: 0.5 };

interface Run {
  logprobs: Float32Array[];
  values: Float32Array[];
  norms: number[];
  after: Float32Array[];
  afterBase: Float32Array[];
  samples: SampleResult[];
  adapterFile: string;
}

async function run(nprocPerNode: number, dir: string, logitsChunkRows = 0, launch: Partial<TorchEngineOptions> = {}): Promise<Run> {
  const e = await TorchEngine.load(checkpointDir('qwen2'), { ...torchTestOptions, nprocPerNode, logitsChunkRows, ...launch });
  const world = nprocPerNode * (launch.nnodes ?? 1);
  try {
    assert.equal(e.workerInfo.worldSize, world);
    assert.equal(e.workerInfo.sharded, world > 1);
    if (logitsChunkRows > 0) assert.equal(e.workerInfo.logitsChunkRows, logitsChunkRows);
    await e.createAdapter('p', { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] }, 3);
    await e.createCritic('c', { kind: 'lora-critic', lora: { rank: 2, alpha: 4, targetModules: ['o_proj'] } }, 4);
    // Two graphs retained at once, then their backwards.
    const lp = await e.forward({ kind: 'adapter', name: 'p' }, batch, { retainGraph: true });
    const v = await e.forward({ kind: 'critic', name: 'c' }, batch, { retainGraph: true });
    await e.backward(lp.handle!, { dLogprobs: weights });
    await e.backward(v.handle!, { dValues: weights });
    const norms = [(await e.optimStep({ kind: 'adapter', name: 'p' }, optim)).gradNorm, (await e.optimStep({ kind: 'critic', name: 'c' }, optim)).gradNorm];
    const after = (await e.forward({ kind: 'adapter', name: 'p' }, batch)).logprobs!;
    const prompts = [seqs[0]!.slice(0, 4), [3], seqs[2]!.slice(0, 7)];
    const samples = await e.sample({ kind: 'adapter', name: 'p' }, prompts, { temperature: 0, topP: 1, topK: 0, maxNewTokens: 5, stopTokenIds: [], stopStrings: [], seed: 0 });
    const adapterFile = join(dir, `adapter-${world}-${launch.nnodes ?? 1}`);
    await e.saveAdapter('p', adapterFile);
    await e.setBaseTrainable(true);
    const fb = await e.forward({ kind: 'base' }, batch, { retainGraph: true });
    await e.backward(fb.handle!, { dLogprobs: weights });
    norms.push((await e.optimStep({ kind: 'base' }, optim)).gradNorm);
    const afterBase = (await e.forward({ kind: 'base' }, batch)).logprobs!;
    return { logprobs: lp.logprobs!, values: v.values!, norms, after, afterBase, samples, adapterFile: join(adapterFile, 'adapter_model.safetensors') };
  } finally {
    await e.dispose();
  }
}

/** One process's run, computed once for both tests. */
let oneProcess: Promise<Run> | undefined;
function single(dir: string): Promise<Run> {
  const ck = checkpointJobs(['qwen2']);
  if (ck.length) oracleBatch(ck);
  return (oneProcess ??= run(1, dir));
}

function assertSameRun(one: Run, two: Run): void {
  assert.ok(maxAbsDiff(one.logprobs, two.logprobs) < TOL);
  assert.ok(maxAbsDiff(one.values, two.values) < TOL);
  one.norms.forEach((n, i) => assert.ok(Math.abs(n - two.norms[i]!) < TOL * n, `grad norm ${i}: ${n} vs ${two.norms[i]}`));
  const d = maxAbsDiff(one.after, two.after);
  assert.ok(d < TOL, `log-probs after the adapter step: max |Δ| = ${d}`);
  assert.ok(maxAbsDiff(one.after, one.logprobs) > 1e-3, 'the step changed the log-probs');
  const a = readSafetensors(one.adapterFile), b = readSafetensors(two.adapterFile);
  for (const [k, t] of a) assert.ok(maxAbsDiff([t.data], [b.get(k)!.data]) < TOL, k);
  const db = maxAbsDiff(one.afterBase, two.afterBase);
  assert.ok(db < TOL, `log-probs after the base step: max |Δ| = ${db}`);
  assert.ok(maxAbsDiff(one.afterBase, one.after) > 1e-3, 'the base step changed the log-probs');
  assert.deepEqual(two.samples.map((r) => [r.tokens, r.stopReason]), one.samples.map((r) => [r.tokens, r.stopReason]), 'greedy samples');
  assert.ok(maxAbsDiff(two.samples.map((r) => r.logprobs), one.samples.map((r) => r.logprobs)) < TOL);
}

const dir = skip ? '' : tempDir('torch-fsdp');

test('two processes (FSDP2 on gloo) compute what one process computes', { skip }, async () => {
  const one = await single(dir);
  // The two processes also score in chunks of 3 rows (the tied lm_head's logits recomputed in the
  // backward under FSDP2's resharding), against one process scoring each batch in one piece.
  const two = await run(2, dir, 3);
  assertSameRun(one, two);
});

test('two machines (two torchrun nodes on this one, static rendezvous), the other node started first by the command docs/scaling.md gives: rank 0 is the controller\'s node, and they compute what one process computes', { skip, timeout: 300_000 }, async () => {
  const one = await single(dir);
  const port = await freePort();
  // Node 1, as a user starts it on another machine (docs/scaling.md, "Several machines"), before node 0.
  const other = spawn(torchPython, ['-m', 'torch.distributed.run', '--nnodes', '2', '--node-rank', '1', '--nproc-per-node', '1',
    '--rdzv-backend', 'static', '--rdzv-endpoint', `127.0.0.1:${port}`, '-m', 'marft_torch', '--model', checkpointDir('qwen2'),
    '--device', 'cpu', '--threads', '1'], { env: { ...process.env, PYTHONPATH: torchPackageDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let otherLog = '';
  other.stdout!.on('data', (d) => (otherLog += d));
  other.stderr!.on('data', (d) => (otherLog += d));
  const exited = new Promise<number | null>((resolve) => other.on('exit', (code) => resolve(code)));
  try {
    await new Promise((r) => setTimeout(r, 2_000));
    // dispose's default grace for the group's exit: torchrun on node 0 waits for node 1's exit first,
    // which comes at once (a rank that died at its exit once left it waiting until the kill; Group.exit
    // in engines/torch/marft_torch/parallel.py).
    const two = await run(1, dir, 0, { nnodes: 2, rdzvEndpoint: `127.0.0.1:${port}` });
    assertSameRun(one, two);
    // The controller's dispose ends every node: node 1 leaves when rank 0 broadcasts the shutdown.
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 60_000).unref())]);
    assert.equal(code, 0, `node 1: ${code}\n${otherLog.slice(-2000)}`);
  } finally {
    other.kill('SIGKILL');
  }
});
