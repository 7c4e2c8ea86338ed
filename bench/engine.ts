// `npm run bench:engine`: the embedded engine against PyTorch (CPU, float32) on the reference
// benchmark model (hidden 256, 4 layers, 4 heads, FFN 1024, vocab 2048; batch 8 × 128 tokens), in one
// run with both sides interleaved so machine load hits both alike:
//   full    one forward + backward, every weight trainable
//   lora    one forward + backward through a LoRA adapter (rank 8, all linear layers)
//   sample  32 prompts × 128 new tokens with a KV cache (transformers' generate on the PyTorch side)
// Prints a table, then the last line as JSON: {"ours_ms","torch_ms","ratio",...} for the full step.
// Options: --iters N (default 7, medians reported), --no-torch, --no-sample, --settle-ms N (idle time
// before each timed call, default 300; see settle below), --warmup N (untimed calls per case and side
// first, default 3).
// --qwen-0.5b instead measures, on our side only, one LoRA training step (4 × 256 tokens) and sampling
// (prefill of 4 × 32 tokens + 1 token, then 16 tokens) of a model with Qwen2.5-0.5B's shape and random
// weights, with the peak resident memory.
// --model DIR measures a real model folder against transformers, PEFT and vLLM (bench/real-model.ts).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../src/engine/index.ts';
import type { Engine, ModelConfig, ScoreRequest } from '../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../src/engine/types.ts';
import { blasInfo } from '../src/engine/embedded/blas.ts';
import { threadCount, workersReady } from '../src/engine/embedded/thread-pool.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const argv = process.argv.slice(2);
const iters = Number(argv[argv.indexOf('--iters') + 1]) > 0 && argv.includes('--iters') ? Number(argv[argv.indexOf('--iters') + 1]) : 7;
const withTorch = !argv.includes('--no-torch');
const withSample = !argv.includes('--no-sample');
// Idle time before every timed call, so that the worker threads the previous call left spinning
// (OpenBLAS's on our side, OpenMP's on PyTorch's: both busy-wait for a while before sleeping) are
// asleep when the other side starts on the same cores; without it each side is timed partly
// against the other's spinning threads.
const settleMs = argv.includes('--settle-ms') ? Number(argv[argv.indexOf('--settle-ms') + 1]) : 300;
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, settleMs));
// Untimed calls of each case on both sides before the timed ones. Ours needs a few: V8 is still
// optimising the JavaScript and tiering up the WebAssembly during the first steps (the first two
// full steps measured 239 and 229 ms, the next ten 199-222 ms).
const warmup = argv.includes('--warmup') ? Number(argv[argv.indexOf('--warmup') + 1]) : 3;

const cfg: ModelConfig = {
  architecture: 'llama', vocabSize: 2048, hiddenSize: 256, intermediateSize: 1024, numHiddenLayers: 4, numAttentionHeads: 4,
  numKeyValueHeads: 4, headDim: 64, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 512, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: false, bosTokenId: null, eosTokenIds: [],
};
const B = 8, T = 128, PROMPTS = 32, PROMPT_LEN = 16, NEW_TOKENS = 128;
const PEAK_GFLOPS = 465;

/** FLOPs of one forward + backward (backward = 2 × forward), attention counted over the full T×T square. */
function stepFlops(): number {
  const H = cfg.hiddenSize, I = cfg.intermediateSize, L = cfg.numHiddenLayers, V = cfg.vocabSize;
  const qkvo = 2 * H * cfg.numAttentionHeads * cfg.headDim + 2 * H * cfg.numKeyValueHeads * cfg.headDim;
  const perToken = L * (qkvo + 3 * H * I) + H * V;
  const attention = L * B * 2 * (2 * T * T * cfg.numAttentionHeads * cfg.headDim);
  return 3 * (2 * B * T * perToken + attention);
}

// Sequences of T + 1 tokens: T inputs and T scored targets, identical on both sides.
const tokens = Array.from({ length: B }, (_, b) => Array.from({ length: T + 1 }, (_, i) => (b * 977 + i * 131 + ((i * i) % 17)) % cfg.vocabSize));
const prompts = Array.from({ length: PROMPTS }, (_, b) => Array.from({ length: PROMPT_LEN }, (_, i) => (b * 37 + i * 11) % cfg.vocabSize));
const batch: ScoreRequest[] = tokens.map((t) => ({ tokens: t, scoreFrom: 1 }));
const dLogprobs = tokens.map(() => new Float32Array(T).fill(-1 / (B * T)));

async function oursStep(e: Engine, target: { kind: 'base' } | { kind: 'adapter'; name: string }): Promise<number> {
  const t0 = performance.now();
  const f = await e.forward(target, batch, { retainGraph: true });
  await e.backward(f.handle!, { dLogprobs });
  const ms = performance.now() - t0;
  if (target.kind === 'base') await e.zeroGrad({ kind: 'base' });
  else await e.zeroGrad({ kind: 'adapter', name: target.name });
  return ms;
}

async function oursSample(e: Engine): Promise<number> {
  const t0 = performance.now();
  await e.sample({ kind: 'base' }, prompts, { temperature: 1, topP: 1, topK: 0, maxNewTokens: NEW_TOKENS, stopTokenIds: [], stopStrings: [], seed: 1 });
  return performance.now() - t0;
}

class TorchWorker {
  private lines: AsyncIterableIterator<string>;
  private proc;
  constructor() {
    const python = join(repoRoot, '.venv-oracle/bin/python');
    const spec = JSON.stringify({ tokens, prompts, new_tokens: NEW_TOKENS });
    this.proc = spawn(python, [join(repoRoot, 'bench/engine_torch.py'), spec], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' } });
    this.lines = createInterface({ input: this.proc.stdout })[Symbol.asyncIterator]();
  }
  async ready(): Promise<{ threads: number; torch: string }> {
    return JSON.parse((await this.lines.next()).value as string) as { threads: number; torch: string };
  }
  async run(cmd: string): Promise<number> {
    this.proc.stdin.write(`${cmd}\n`);
    const r = await this.lines.next();
    if (r.done) throw new Error(`torch worker exited during '${cmd}'`);
    return Number(r.value);
  }
  close(): void {
    this.proc.stdin.write('quit\n');
    this.proc.stdin.end();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const info = blasInfo();
  const torchAvailable = withTorch && existsSync(join(repoRoot, '.venv-oracle/bin/python'));
  if (withTorch && !torchAvailable) console.log('no .venv-oracle: PyTorch side skipped (run scripts/setup.sh)');
  const full = createEngine(cfg, { seed: 1 });
  await full.setBaseTrainable(true);
  const lora = createEngine(cfg, { seed: 1 });
  await lora.createAdapter('a', { rank: 8, alpha: 16, targetModules: [...ALL_LINEAR_MODULES] }, 1);
  const torch = torchAvailable ? new TorchWorker() : null;
  const torchInfo = torch ? await torch.ready() : null;
  // The engine's pool starts its workers at the first large pass: wait for them before timing.
  await oursStep(full, { kind: 'base' });
  for (let i = 0; i < 200 && threadCount() > 1 && !workersReady(); i++) await new Promise((r) => setTimeout(r, 50));
  const pool = workersReady();
  console.log(`ours: ${threadCount()} threads (${pool ? 'the engine\'s pool, OpenBLAS on one thread' : `no pool: OpenBLAS, ${blasInfo().threads} threads`}), BLAS ${info.backend} (${info.library ?? 'JavaScript'}); ` +
    `PyTorch ${torchInfo ? `${torchInfo.torch}, ${torchInfo.threads} threads` : 'skipped'}`);

  const cases: [string, () => Promise<number>, string][] = [
    ['full', () => oursStep(full, { kind: 'base' }), 'full'],
    ['lora', () => oursStep(lora, { kind: 'adapter', name: 'a' }), 'lora'],
  ];
  if (withSample) cases.push(['sample', () => oursSample(full), 'sample']);
  const times = new Map<string, { ours: number[]; torch: number[] }>();
  for (const [name, ours, cmd] of cases) {
    const t = { ours: [] as number[], torch: [] as number[] };
    times.set(name, t);
    const n = name === 'sample' ? Math.max(2, Math.ceil(iters / 3)) : iters;
    for (let w = 0; w < warmup; w++) {
      await ours();
      if (torch) await torch.run(cmd);
    }
    for (let i = 0; i < n; i++) {
      await settle();
      t.ours.push(await ours());
      await settle();
      if (torch) t.torch.push(await torch.run(cmd));
    }
  }
  torch?.close();

  const gflop = stepFlops() / 1e9;
  const rows: Record<string, number | null> = {};
  console.log(`\n${'case'.padEnd(8)} ${'ours ms'.padStart(10)} ${'torch ms'.padStart(10)} ${'ratio'.padStart(7)}`);
  for (const [name, t] of times) {
    const o = median(t.ours), p = t.torch.length ? median(t.torch) : null;
    rows[`${name}_ours_ms`] = o;
    rows[`${name}_torch_ms`] = p;
    console.log(`${name.padEnd(8)} ${o.toFixed(1).padStart(10)} ${(p?.toFixed(1) ?? '-').padStart(10)} ${(p ? (o / p).toFixed(2) : '-').padStart(7)}`);
  }
  const ours = rows['full_ours_ms']!, torchMs = rows['full_torch_ms'] ?? null;
  const oursGflops = gflop / (ours / 1000);
  console.log(`full step: ${gflop.toFixed(1)} GFLOP → ${oursGflops.toFixed(1)} GFLOP/s ours (${((100 * oursGflops) / PEAK_GFLOPS).toFixed(1)}% of ${PEAK_GFLOPS} GFLOP/s)` +
    (torchMs ? `, ${(gflop / (torchMs / 1000)).toFixed(1)} GFLOP/s PyTorch` : ''));
  if (withSample) {
    const s = rows['sample_ours_ms']!;
    console.log(`sampling: ${((PROMPTS * NEW_TOKENS) / (s / 1000)).toFixed(0)} tokens/s ours` +
      (rows['sample_torch_ms'] ? `, ${((PROMPTS * NEW_TOKENS) / (rows['sample_torch_ms'] / 1000)).toFixed(0)} tokens/s transformers` : ''));
  }
  console.log(JSON.stringify({
    ours_ms: round(ours), torch_ms: torchMs === null ? null : round(torchMs), ratio: torchMs === null ? null : round(ours / torchMs, 3),
    gflop: round(gflop, 2), ours_gflops: round(oursGflops), fraction_of_peak: round(oursGflops / PEAK_GFLOPS, 3),
    lora_ours_ms: round(rows['lora_ours_ms']!), lora_torch_ms: rows['lora_torch_ms'] == null ? null : round(rows['lora_torch_ms']),
    sample_ours_ms: rows['sample_ours_ms'] == null ? null : round(rows['sample_ours_ms']), sample_torch_ms: rows['sample_torch_ms'] == null ? null : round(rows['sample_torch_ms']),
    blas: info.backend, threads: threadCount(), pool, iters, warmup, settle_ms: settleMs,
  }));
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

async function qwen05b(): Promise<void> {
  const big: ModelConfig = {
    architecture: 'qwen2', vocabSize: 151936, hiddenSize: 896, intermediateSize: 4864, numHiddenLayers: 24, numAttentionHeads: 14,
    numKeyValueHeads: 2, headDim: 64, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 32768, tieWordEmbeddings: true,
    attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [151643],
  };
  const peakMb = (): number => process.resourceUsage().maxRSS / 1024;
  let t0 = performance.now();
  const e = createEngine(big, { seed: 1 });
  await e.createAdapter('a', { rank: 16, alpha: 32, targetModules: [...ALL_LINEAR_MODULES] }, 1);
  console.log(`init (random weights, 494M parameters): ${(performance.now() - t0).toFixed(0)} ms, peak RSS ${peakMb().toFixed(0)} MB`);
  const seqs = Array.from({ length: 4 }, (_, b) => ({ tokens: Array.from({ length: 257 }, (_, i) => (b * 7919 + i * 104729) % big.vocabSize), scoreFrom: 1 }));
  const grads = seqs.map(() => new Float32Array(256).fill(-1 / 1024));
  const out: Record<string, number> = {};
  for (let it = 0; it < 2; it++) {
    t0 = performance.now();
    const f = await e.forward({ kind: 'adapter', name: 'a' }, seqs, { retainGraph: true });
    const t1 = performance.now();
    await e.backward(f.handle!, { dLogprobs: grads });
    const t2 = performance.now();
    await e.optimStep({ kind: 'adapter', name: 'a' }, { lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    const t3 = performance.now();
    console.log(`LoRA step (4 × 256 tokens): forward ${(t1 - t0).toFixed(0)} ms, backward ${(t2 - t1).toFixed(0)} ms, AdamW ${(t3 - t2).toFixed(0)} ms; peak RSS ${peakMb().toFixed(0)} MB`);
    out['lora_step_ms'] = t3 - t0;
  }
  const prompts = Array.from({ length: 4 }, (_, b) => Array.from({ length: 32 }, (_, i) => (b * 31 + i * 17) % big.vocabSize));
  const params = { temperature: 1, topP: 1, topK: 0, stopTokenIds: [], stopStrings: [], seed: 1 };
  t0 = performance.now();
  await e.sample({ kind: 'adapter', name: 'a' }, prompts, { ...params, maxNewTokens: 1 });
  out['prefill_plus_1_ms'] = performance.now() - t0;
  t0 = performance.now();
  await e.sample({ kind: 'adapter', name: 'a' }, prompts, { ...params, maxNewTokens: 17 });
  out['per_token_ms'] = (performance.now() - t0 - out['prefill_plus_1_ms']) / 16;
  console.log(`sampling 4 prompts × 32 tokens: prefill + first token ${out['prefill_plus_1_ms'].toFixed(0)} ms, then ${out['per_token_ms'].toFixed(0)} ms per token (batch of 4); peak RSS ${peakMb().toFixed(0)} MB`);
  console.log(JSON.stringify({ model: 'qwen2.5-0.5b-shape', ...Object.fromEntries(Object.entries(out).map(([k, v]) => [k, round(v)])), peak_rss_mb: round(peakMb(), 0) }));
}

// --model DIR: a real model folder at its real size (bench/real-model.ts).
if (argv.includes('--model')) await import('./real-model.ts');
else if (argv.includes('--qwen-0.5b')) await qwen05b();
else await main();
