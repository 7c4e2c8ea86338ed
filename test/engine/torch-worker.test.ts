// The torch engine's transport: framing, float arrays bit for bit through the real worker, error
// replies that leave the worker serving, and a worker that dies (exit, SIGKILL, a model it cannot load)
// reaching the caller as one clear error rather than a hang.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import { TorchEngine } from '../../src/engine/torch/engine.ts';
import { WorkerProcess } from '../../src/engine/torch/worker-process.ts';
import { encodeFrame, f32Bytes, FrameReader, bytesF32 } from '../../src/engine/torch/framing.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch, torchTestOptions } from './torch-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 40, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 64, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [0],
};
const work = tempDir('torch-worker');
const modelDir = join(work, 'model');
let engine: TorchEngine;

before(async () => {
  if (skipWithoutTorch) return;
  await createEngine(cfg, { seed: 2 }).saveBase(modelDir);
  engine = await TorchEngine.load(modelDir, torchTestOptions);
});
after(async () => { await engine?.dispose(); });

/** Every float32 bit pattern class: ±0, subnormals, ±inf, quiet and signalling NaNs with payloads, then pseudo-random words. */
function awkwardFloats(n: number): Float32Array {
  const words = new Uint32Array(n);
  const fixed = [0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc12345, 0xffc00001, 0x7f800001, 0x7fbfffff, 0x3f800000];
  words.set(fixed);
  let x = 12345;
  for (let i = fixed.length; i < n; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; words[i] = x; }
  return new Float32Array(words.buffer);
}

test('frames split at any byte boundary decode to the messages sent', () => {
  const msgs = [{ id: 1, cmd: 'a', args: { x: [1, 2, 3] } }, { id: 2, ok: true, result: f32Bytes(new Float32Array([1.5, -2])) }, { id: 3, s: 'é'.repeat(300) }];
  const stream = Uint8Array.from(msgs.flatMap((m) => [...encodeFrame(m)]));
  for (const cut of [1, 2, 3, 4, 5, 7, 64, stream.length]) {
    const reader = new FrameReader();
    const got: unknown[] = [];
    for (let o = 0; o < stream.length; o += cut) got.push(...reader.push(stream.subarray(o, Math.min(stream.length, o + cut))));
    assert.equal(got.length, 3, `chunks of ${cut} bytes`);
    assert.deepEqual((got[0] as typeof msgs[0]).args, msgs[0]!.args);
    assert.deepEqual([...bytesF32((got[1] as { result: Uint8Array }).result)], [1.5, -2]);
    assert.equal((got[2] as { s: string }).s, msgs[2]!.s);
  }
});

test('float arrays round-trip bit for bit through a torch tensor in the worker', { skip: skipWithoutTorch }, async () => {
  const sent = awkwardFloats(10_000);
  const small = Float32Array.of(0.1, -3e38, 1e-45);
  const reply = await engine.command('echo', { value: { big: f32Bytes(sent), nested: [f32Bytes(small), 7, 'text'], empty: f32Bytes(new Float32Array(0)) } }) as
    { value: { big: Uint8Array; nested: [Uint8Array, number, string]; empty: Uint8Array } };
  const back = new Uint32Array(bytesF32(reply.value.big).buffer);
  assert.deepEqual(back, new Uint32Array(sent.buffer));
  assert.deepEqual(new Uint32Array(bytesF32(reply.value.nested[0]).buffer), new Uint32Array(small.buffer));
  assert.deepEqual(reply.value.nested.slice(1), [7, 'text']);
  assert.equal(bytesF32(reply.value.empty).length, 0);
});

test('a caller mistake comes back as a one-line error and the worker goes on serving', { skip: skipWithoutTorch }, async () => {
  await assert.rejects(engine.forward({ kind: 'adapter', name: 'nope' }, [{ tokens: [1, 2], scoreFrom: 1 }]), /torch engine: no adapter named 'nope' \(have: none\)/);
  await assert.rejects(engine.forward({ kind: 'base' }, [{ tokens: [1, 99], scoreFrom: 1 }]), /token id 99 is outside the vocabulary \(size 40\)/);
  await assert.rejects(engine.forward({ kind: 'base' }, [{ tokens: [1, 2], scoreFrom: 0 }]), /scoreFrom must be an integer in \[1, 2\]/);
  await assert.rejects(engine.optimStep({ kind: 'base' }, { lr: 1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 }), /the base is frozen/);
  const f = await engine.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 1 }], { retainGraph: true });
  await assert.rejects(engine.backward(f.handle!, { dLogprobs: [new Float32Array(2)] }), /the base is frozen/);
  await assert.rejects(engine.backward(f.handle!, { dLogprobs: [new Float32Array(2)] }), /graph \d+ is unknown or was already consumed/);
  const ok = await engine.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 2 }]);
  assert.equal(ok.logprobs![0]!.length, 1);
});

test('a worker that exits mid-call rejects that call and every later one with its exit code', { skip: skipWithoutTorch }, async () => {
  const e = await TorchEngine.load(modelDir, torchTestOptions);
  const pending = e.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 1 }]);
  const dying = e.command('exit', { code: 7 });
  await assert.rejects(dying, /torch engine worker exited with code 7/);
  assert.ok((await pending).logprobs, 'the call before the exit was answered');
  await assert.rejects(e.forward({ kind: 'base' }, [{ tokens: [1, 2], scoreFrom: 1 }]), /torch engine worker exited with code 7/);
  await e.dispose(); // nothing left to stop: returns at once
});

test('a model the worker cannot load fails the start with one line naming the folder', { skip: skipWithoutTorch }, async () => {
  const broken = join(work, 'no-weights');
  mkdirSync(broken, { recursive: true });
  writeFileSync(join(broken, 'config.json'), JSON.stringify({ model_type: 'qwen3', architectures: ['Qwen3ForCausalLM'], vocab_size: 40, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, max_position_embeddings: 64, rms_norm_eps: 1e-6, rope_theta: 1e6 }));
  const err = await TorchEngine.load(broken, torchTestOptions).then(() => null, (x: Error) => x);
  assert.ok(err, 'the start failed');
  assert.match(err.message, /cannot load .*no-weights/);
  assert.equal(err.message.split('\n').length, 1, err.message);
});

// Nothing else holds this file's event loop while it runs (the shared worker is idle): a close that
// stopped holding it after the worker's answer would end the process here and cancel the test.
test('a worker that answers the shutdown but does not exit is killed after the grace period, and close returns once it is gone', { skip: skipWithoutTorch }, async () => {
  const { worker } = await WorkerProcess.start(modelDir, torchTestOptions);
  await worker.call('lingerOnShutdown', { seconds: 600 });
  const t0 = Date.now();
  await worker.close(2_000);
  assert.ok(Date.now() - t0 >= 1_900, `close returned after ${Date.now() - t0} ms, before the grace period`);
  assert.throws(() => process.kill(worker.pid, 0), /ESRCH/, 'the worker is gone');
});

// Last: it ends the file's shared worker.
test('a killed worker (SIGKILL) is reported as such to the call waiting on it and to later calls', { skip: skipWithoutTorch }, async () => {
  process.kill(engine.workerPid, 'SIGKILL');
  await assert.rejects(engine.forward({ kind: 'base' }, [{ tokens: [1, 2, 3], scoreFrom: 1 }]), /torch engine worker was killed by SIGKILL/);
  await assert.rejects(engine.createAdapter('a', { rank: 2, alpha: 4, targetModules: ['q_proj'] }, 1), /torch engine worker was killed by SIGKILL/);
});
