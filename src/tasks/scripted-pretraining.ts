// Pretraining a task's model from random initialisation on scripted transcripts, and keeping it in
// a cache folder: the two study tasks that build their models on the spot (arith-pair, code-pair)
// share this. The initialisation and the transcripts draw from their own seed streams of one seed,
// so a model is a function of (configuration, steps, transcripts, seed) and a cached copy is reused
// only under a name that hashes all of them (the caller's `cacheName`).
import { join } from 'node:path';
import { createEngine } from '../engine/index.ts';
import type { Engine, ModelConfig, ScoreRequest } from '../engine/types.ts';
import { cachedBase } from '../runs/base-folder.ts';
import { deriveSeed, Rng } from '../core/rng.ts';
import { DEFAULT_SFT, sft } from '../train/sft.ts';

export interface ScriptedPretraining {
  /** The task's name, at the start of every progress line ("arith-pair"). */
  task: string;
  /** What is pretrained, for the progress lines ("the students' base"). */
  label: string;
  /** Its short name on the per-step lines ("student"). */
  short: string;
  config: ModelConfig;
  steps: number;
  /** Scripted episodes per step (for the progress line). */
  episodesPerStep: number;
  /** Seed streams of the initialisation and of the transcripts. */
  initStream: number;
  dataStream: number;
  /** One step's sequences, drawn from `rng` (the transcripts' stream). */
  batch: (rng: Rng) => Promise<ScoreRequest[]>;
}

/** Pretrains the model from `seed` (progress on stderr: four loss lines and the time). */
export async function pretrainScripted(spec: ScriptedPretraining, seed: number): Promise<Engine> {
  const engine = createEngine(spec.config, { seed: deriveSeed(seed, spec.initStream) });
  const rng = new Rng(deriveSeed(seed, spec.dataStream));
  const started = performance.now();
  process.stderr.write(`${spec.task}: pretraining ${spec.label} (${spec.steps} steps of ${spec.episodesPerStep} scripted episodes)\n`);
  const every = Math.max(1, Math.round(spec.steps / 4));
  const losses = await sft(engine, () => spec.batch(rng), { ...DEFAULT_SFT, steps: spec.steps }, (step, loss) => {
    if (step % every === 0 || step === spec.steps) process.stderr.write(`${spec.task}:   ${spec.short} step ${step}/${spec.steps}  loss ${loss.toFixed(4)}\n`);
  });
  process.stderr.write(`${spec.task}: ${spec.label} pretrained in ${((performance.now() - started) / 1000).toFixed(0)} s (final loss ${(losses[losses.length - 1] ?? NaN).toFixed(4)})\n`);
  return engine;
}

/** The model from `cacheDir/cacheName` when it holds an intact copy, else pretrained and stored there ('' = no cache). */
export async function cachedScripted(spec: ScriptedPretraining, seed: number, cacheDir: string, cacheName: string): Promise<Engine> {
  if (!cacheDir) return pretrainScripted(spec, seed);
  return cachedBase(join(cacheDir, cacheName), () => pretrainScripted(spec, seed));
}
