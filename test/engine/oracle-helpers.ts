// Shared helpers of the engine's oracle tests: the Python reference (oracle/engine_oracle.py run by
// .venv-oracle), tiny random checkpoints cached per architecture, random weights that spread the
// distributions, and comparisons.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { namedParams, randomWeights, type BaseWeights } from '../../src/engine/embedded/weights.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { repoRoot, runPython, tempDir } from '../python-oracle.ts';

export { repoRoot, skipWithoutVenv, tempDir } from '../python-oracle.ts';
const script = join(repoRoot, 'oracle/engine_oracle.py');

export interface OracleJob {
  cmd: string;
  /** Written to a JSON file passed as --input. */
  input?: unknown;
  /** Output file name inside the batch's temp dir (default out-<i>.json). */
  outName?: string;
  [flag: string]: unknown;
}

/**
 * Runs oracle jobs in ONE Python process (importing torch and transformers costs seconds).
 * Returns each job's output path; JSON outputs can be read with readJson.
 */
export function oracleBatch(jobs: OracleJob[]): string[] {
  const dir = tempDir('oracle');
  const outs: string[] = [];
  const list = jobs.map((job, i) => {
    const { input, outName, ...flags } = job;
    const out = join(dir, outName ?? `out-${i}.json`);
    outs.push(out);
    const entry: Record<string, unknown> = { ...flags };
    if (!('out' in flags)) entry['out'] = out;
    else outs[i] = String(flags['out']);
    if (input !== undefined) {
      entry['input'] = join(dir, `in-${i}.json`);
      writeFileSync(entry['input'] as string, JSON.stringify(input));
    }
    return entry;
  });
  writeFileSync(join(dir, 'jobs.json'), JSON.stringify(list));
  runPython([script, 'batch', '--input', join(dir, 'jobs.json')], { env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1', TQDM_DISABLE: '1' } });
  return outs;
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export type TinyArch = 'llama' | 'qwen2' | 'qwen3';

export function checkpointDir(arch: TinyArch): string {
  return join(tmpdir(), `marft-tiny-${arch}-v1`);
}

/**
 * Jobs that write the tiny random checkpoints (every weight perturbed, biases and norms included,
 * by transformers' save_pretrained) that are not cached in the temp dir yet. qwen2 has tied
 * embeddings, llama and qwen3 untied. Run them first in a test file's batch.
 */
export function checkpointJobs(archs: TinyArch[]): OracleJob[] {
  return archs.filter((a) => !existsSync(join(checkpointDir(a), 'model.safetensors')))
    .map((arch) => ({ cmd: 'make', arch, tied: arch === 'qwen2', seed: 1, out: checkpointDir(arch) }));
}

/** Largest |a − b| over ragged arrays. */
export function maxAbsDiff(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let m = 0;
  a.forEach((row, i) => {
    const other = b[i]!;
    if (row.length !== other.length) throw new Error(`row ${i}: ${row.length} vs ${other.length}`);
    for (let k = 0; k < row.length; k++) m = Math.max(m, Math.abs(row[k]! - other[k]!));
  });
  return m;
}

/** ‖a − b‖∞ / max(‖b‖∞, tiny): the relative error used for gradient comparisons. */
export function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let d = 0, s = 0;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i]! - b[i]!));
    s = Math.max(s, Math.abs(b[i]!));
  }
  return d / Math.max(s, 1e-12);
}

/** Deterministic token sequences for the oracles. */
export function testSequences(vocab: number, lengths: number[], seed: number): number[][] {
  let x = seed >>> 0;
  const next = (): number => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
  return lengths.map((n) => Array.from({ length: n }, () => next() % vocab));
}

/** Random weights of std ~1/√fan_in (embedding std 1; norms and biases as randomWeights makes them), so distributions are neither flat nor one-hot. */
export function spreadWeights(cfg: ModelConfig, seed: number): BaseWeights {
  const w = randomWeights(cfg, seed);
  for (const [name, p] of namedParams(w)) {
    if (name.endsWith('norm.weight') || name.endsWith('.bias')) continue;
    const scale = name.includes('embed') ? 1 / 0.02 : 1 / (0.02 * Math.sqrt(p.shape[1]!));
    p.data.forEach((v, i, a) => { a[i] = v * scale; });
  }
  return w;
}
