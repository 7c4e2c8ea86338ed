// Memory over a run whose passes change shape from step to step, as RL's do (every step's
// responses have other lengths): LoRA training steps (forward with retained graph, backward of
// −mean log-prob, AdamW) on a model folder, each step on 4 sequences whose lengths come from a fixed
// pseudo-random draw, and after each step the process's resident set, its peak, and the bytes the
// embedded engine's buffer pool holds free for reuse (src/engine/embedded/buffer-pool.ts).
//
//   node --import tsx bench/memory-growth.ts --model models/smollm2-135m-instruct [--steps 12] [--min-length 128] [--max-length 640]
//
// Its last line is JSON: {"model", "steps", "tokens": [...], "rss_mb": [...], "peak_rss_mb": [...], "pooled_free_mb": [...]}.
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { loadEngine } from '../src/engine/index.ts';
import { ALL_LINEAR_MODULES, type ScoreRequest } from '../src/engine/types.ts';
import { pooledBufferBytes } from '../src/engine/embedded/buffer-pool.ts';
import { Rng } from '../src/core/rng.ts';

function fail(message: string): never {
  console.error(`bench/memory-growth: ${message}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) fail(`--${name} needs a positive integer, got ${JSON.stringify(argv[i + 1])}`);
  return v;
}
const mi = argv.indexOf('--model');
if (mi < 0 || !argv[mi + 1]) fail('--model DIR is required (e.g. models/smollm2-135m-instruct, made by bash scripts/setup.sh --smollm2)');
const modelDir = resolve(argv[mi + 1]!);
if (!existsSync(join(modelDir, 'config.json'))) fail(`${modelDir} is not a model folder (no config.json)`);
const steps = option('steps', 12);
const minLength = option('min-length', 128);
const maxLength = option('max-length', 640);
if (maxLength < minLength) fail('--max-length must be at least --min-length');

const engine = await loadEngine(modelDir);
const vocab = engine.info.vocabSize;
await engine.createAdapter('a', { rank: 8, alpha: 16, targetModules: [...ALL_LINEAR_MODULES] }, 1);
const rng = new Rng(11);
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const out = { tokens: [] as number[], rss_mb: [] as number[], peak_rss_mb: [] as number[], pooled_free_mb: [] as number[] };
for (let step = 0; step < steps; step++) {
  const lengths = Array.from({ length: 4 }, () => minLength + Math.floor(rng.next() * (maxLength - minLength + 1)));
  const batch: ScoreRequest[] = lengths.map((n, b) => ({ tokens: Array.from({ length: n }, (_, t) => (b * 7919 + t * 104729 + step * 31 + 17) % vocab), scoreFrom: 1 }));
  const scored = lengths.reduce((s, n) => s + n - 1, 0);
  const f = await engine.forward({ kind: 'adapter', name: 'a' }, batch, { retainGraph: true });
  await engine.backward(f.handle!, { dLogprobs: lengths.map((n) => new Float32Array(n - 1).fill(-1 / scored)) });
  await engine.optimStep({ kind: 'adapter', name: 'a' }, { lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
  out.tokens.push(lengths.reduce((s, n) => s + n, 0));
  out.rss_mb.push(mb(process.memoryUsage.rss()));
  out.peak_rss_mb.push(Math.round(process.resourceUsage().maxRSS / 1024));
  out.pooled_free_mb.push(mb(pooledBufferBytes()));
  console.log(`step ${step + 1}/${steps}: ${out.tokens[step]} tokens (${lengths.join(', ')}); RSS ${out.rss_mb[step]} MB, peak ${out.peak_rss_mb[step]} MB; pool holds ${out.pooled_free_mb[step]} MB free`);
}
await engine.dispose();
console.log(JSON.stringify({ model: basename(modelDir), steps, ...out }));
