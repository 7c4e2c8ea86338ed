// Checkpoint folders: written with a manifest, read back only when intact; a damaged or escaping
// latest.json, a damaged state.json or a truncated adapter file falls back to the newest intact
// checkpoint with a notice; a folder with checkpoints but none intact is refused, never restarted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointProblem, latestCheckpoint, loadCheckpoint, saveCheckpoint } from '../../src/runs/checkpoint.ts';
import { NonFiniteStateError } from '../../src/engine/index.ts';
import { nonFiniteTensor } from '../../src/runs/finite-guard.ts';
import { decodeMetrics, encodeMetrics } from '../../src/runs/metrics-log.ts';
import { DamagedRunError } from '../../src/runs/run-errors.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';

const lora = { rank: 1, alpha: 1, targetModules: [] };

/** A tabular engine with one adapter and one critic whose rows differ by `x`. */
async function engineWith(x: number): Promise<TabularEngine> {
  const engine = new TabularEngine(4);
  await engine.createAdapter('policy', lora, 0);
  await engine.createCritic('critic', { kind: 'mlp', hidden: [1] }, 0);
  const out = await engine.forward({ kind: 'critic', name: 'critic' }, [{ tokens: [0, 1], scoreFrom: 1 }], { retainGraph: true });
  await engine.backward(out.handle!, { dValues: [Float32Array.of(x)] });
  await engine.optimStep({ kind: 'critic', name: 'critic' }, { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
  return engine;
}

/** A run folder with intact checkpoints at the given steps (keep: all); returns its path. */
async function runWith(steps: number[]): Promise<string> {
  const run = mkdtempSync(join(tmpdir(), 'marft-ckpt-'));
  for (const step of steps) {
    await saveCheckpoint(await engineWith(step), run, { step, metricsLines: step, seed: 1, adapters: ['policy'], critics: ['critic'] }, 100, 'x\n'.repeat(step));
  }
  return run;
}

function collect(): { notices: string[]; notice: (m: string) => void } {
  const notices: string[] = [];
  return { notices, notice: (m) => notices.push(m) };
}

const ckpt = (run: string, name: string) => join(run, 'checkpoints', name);

test('a saved checkpoint is intact and latest.json names it; nothing is left behind', async () => {
  const run = await runWith([2, 4]);
  const { notices, notice } = collect();
  assert.equal(await latestCheckpoint(run, notice), ckpt(run, 'step-000004'));
  assert.deepEqual(notices, []);
  assert.equal(await checkpointProblem(ckpt(run, 'step-000002')), null);
  assert.deepEqual(readdirSync(join(run, 'checkpoints')).sort(), ['latest.json', 'step-000002', 'step-000004']);
  const manifest = JSON.parse(readFileSync(join(ckpt(run, 'step-000004'), 'manifest.json'), 'utf8')) as { files: Record<string, unknown> };
  assert.deepEqual(Object.keys(manifest.files).sort(), ['adapters/policy/tabular_adapter.json', 'critics/critic/tabular_critic.json', 'metrics.jsonl', 'optim/adapter-policy', 'optim/critic-critic', 'state.json']);
});

test('latestCheckpoint follows latest.json when its folder is intact, even if a newer one exists', async () => {
  const run = await runWith([2, 4]);
  writeFileSync(join(run, 'checkpoints', 'latest.json'), JSON.stringify({ dir: 'step-000002' }));
  assert.equal(await latestCheckpoint(run, collect().notice), ckpt(run, 'step-000002'));
});

test('a latest.json naming a missing folder falls back to the newest intact checkpoint, with a notice', async () => {
  const run = await runWith([2]);
  writeFileSync(join(run, 'checkpoints', 'latest.json'), JSON.stringify({ dir: 'step-000004' }));
  const { notices, notice } = collect();
  assert.equal(await latestCheckpoint(run, notice), ckpt(run, 'step-000002'));
  assert.match(notices.join('\n'), /latest\.json names step-000004, which is missing; resuming from step-000002/);
});

test('a corrupt latest.json falls back to the newest intact checkpoint, with a notice', async () => {
  const run = await runWith([2, 4]);
  writeFileSync(join(run, 'checkpoints', 'latest.json'), '{"dir": "step-0');
  const { notices, notice } = collect();
  assert.equal(await latestCheckpoint(run, notice), ckpt(run, 'step-000004'));
  assert.match(notices[0]!, /latest\.json is damaged \(not valid JSON\); resuming from step-000004/);
});

test('a latest.json pointing outside the run (../x, an absolute path) is ignored, with a notice', async () => {
  const run = await runWith([2]);
  const outside = await runWith([8]);
  for (const dir of [`../../${outside.split('/').pop()}/checkpoints/step-000008`, ckpt(outside, 'step-000008')]) {
    writeFileSync(join(run, 'checkpoints', 'latest.json'), JSON.stringify({ dir }));
    const { notices, notice } = collect();
    assert.equal(await latestCheckpoint(run, notice), ckpt(run, 'step-000002'));
    assert.match(notices[0]!, /not a checkpoint folder inside this run; ignored/);
  }
});

test('a corrupt state.json or a truncated adapter file makes a checkpoint not intact: the previous one is used', async () => {
  const run = await runWith([2, 4]);
  writeFileSync(join(ckpt(run, 'step-000004'), 'state.json'), '{"step": 4, "metricsL');
  const { notices, notice } = collect();
  assert.equal(await latestCheckpoint(run, notice), ckpt(run, 'step-000002'));
  assert.match(notices[0]!, /step-000004, which is damaged \(state\.json: \d+ bytes, the manifest says \d+\)/);

  const run2 = await runWith([2, 4]);
  const adapter = join(ckpt(run2, 'step-000004'), 'adapters', 'policy', 'tabular_adapter.json');
  truncateSync(adapter, 5);
  assert.equal(await latestCheckpoint(run2, collect().notice), ckpt(run2, 'step-000002'));
  // Same size, different bytes: the checksum catches it.
  const run3 = await runWith([2, 4]);
  const critic = join(ckpt(run3, 'step-000004'), 'critics', 'critic', 'tabular_critic.json');
  writeFileSync(critic, readFileSync(critic, 'utf8').replace(/\d(?=\D*$)/, (d) => String((Number(d) + 1) % 10)));
  assert.match((await checkpointProblem(ckpt(run3, 'step-000004')))!, /tabular_critic\.json: its checksum does not match/);
  // Loading a damaged checkpoint directly (marft eval --checkpoint) is a one-line DamagedRunError.
  await assert.rejects(loadCheckpoint(new TabularEngine(4), ckpt(run3, 'step-000004'), { optimiser: true }), DamagedRunError);
});

test('checkpoints that are all damaged are refused (nothing restarts over them); none at all is a fresh run', async () => {
  const run = await runWith([2]);
  truncateSync(join(ckpt(run, 'step-000002'), 'optim', 'critic-critic'), 3);
  await assert.rejects(latestCheckpoint(run, collect().notice), (err: Error) => err instanceof DamagedRunError && /holds checkpoints but none is intact \(step-000002: optim\/critic-critic/.test(err.message));
  const empty = mkdtempSync(join(tmpdir(), 'marft-ckpt-'));
  assert.equal(await latestCheckpoint(empty, collect().notice), null);
});

test('a checkpoint folder without a manifest (its write was cut short) is not intact', async () => {
  const run = await runWith([2, 4]);
  rmSync(join(ckpt(run, 'step-000004'), 'manifest.json'));
  assert.equal(await checkpointProblem(ckpt(run, 'step-000004')), 'no manifest.json (its write did not finish)');
  assert.equal(await latestCheckpoint(run, collect().notice), ckpt(run, 'step-000002'));
});

test('a non-finite parameter is never checkpointed: the temporary folder is removed and the previous checkpoint stays latest', async () => {
  const run = await runWith([2]);
  const engine = await engineWith(Number.NaN);
  await assert.rejects(
    saveCheckpoint(engine, run, { step: 4, metricsLines: 4, seed: 1, adapters: ['policy'], critics: ['critic'] }, 100),
    (err: Error) => err instanceof NonFiniteStateError && /the critic 'critic'/.test(err.message),
  );
  assert.deepEqual(readdirSync(join(run, 'checkpoints')).sort(), ['latest.json', 'step-000002']);
  assert.equal(await latestCheckpoint(run, collect().notice), ckpt(run, 'step-000002'));
});

test('nonFiniteTensor finds NaN and Infinity in F32, F64 and BF16 safetensors tensors, and nothing in finite ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-st-'));
  const write = (name: string, dtype: string, bytes: Uint8Array): string => {
    const header = new TextEncoder().encode(JSON.stringify({ __metadata__: { format: 'pt' }, t: { dtype, shape: [bytes.length], data_offsets: [0, bytes.length] } }));
    const len = new Uint8Array(8);
    new DataView(len.buffer).setBigUint64(0, BigInt(header.length), true);
    const file = join(dir, name);
    const all = new Uint8Array(8 + header.length + bytes.length);
    all.set(len, 0);
    all.set(header, 8);
    all.set(bytes, 8 + header.length);
    writeFileSync(file, all);
    return file;
  };
  const f32 = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
  const f64 = (xs: number[]) => new Uint8Array(Float64Array.from(xs).buffer);
  assert.equal(await nonFiniteTensor(write('a', 'F32', f32([1, -2, 3e38]))), null);
  assert.equal(await nonFiniteTensor(write('b', 'F32', f32([1, Number.NaN]))), 't');
  assert.equal(await nonFiniteTensor(write('c', 'F64', f64([1, Number.NEGATIVE_INFINITY]))), 't');
  assert.equal(await nonFiniteTensor(write('d', 'F64', f64([1e300, -1e-300]))), null);
  assert.equal(await nonFiniteTensor(write('e', 'BF16', Uint8Array.of(0x80, 0x7f, 0x80, 0x3f))), 't'); // +Inf, 1.0
  assert.equal(await nonFiniteTensor(write('f', 'BF16', Uint8Array.of(0x80, 0x3f))), null);
});

test('metrics lines round-trip non-finite numbers exactly (as "NaN" / "Infinity" strings); null stays null', () => {
  const m = { step: 3, a: Number.NaN, b: Number.POSITIVE_INFINITY, c: Number.NEGATIVE_INFINITY, d: 0.1, e: null, agent: 'x' };
  const line = encodeMetrics(m);
  assert.equal(line, '{"step":3,"a":"NaN","b":"Infinity","c":"-Infinity","d":0.1,"e":null,"agent":"x"}\n');
  assert.deepEqual(decodeMetrics(line), m);
});
