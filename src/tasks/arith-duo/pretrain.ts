// Full-parameter pretraining of the demo's tiny model from random initialisation on the noisy
// teacher's transcripts (next-token cross-entropy on the replies), through the engine interface:
// forward(base) → per-token log-probs; loss = −mean log-prob, so dL/dlogprob = −1/N per scored
// token; backward; AdamW on the base.
import type { Engine } from '../../engine/types.ts';
import { learningRate } from '../../train/schedules.ts';
import type { CharTokenizer } from '../../tokenizer/index.ts';
import { transcriptBatch } from './corpus.ts';
import type { DuoRoles } from './duo-prompts.ts';
import { Rng } from '../../core/rng.ts';
import type { Problem } from './task.ts';
import type { TeacherNoise } from './teacher.ts';

export interface PretrainConfig {
  steps: number;
  /** Problems per step; each gives two sequences (Planner and Solver turns). */
  problemsPerStep: number;
  lr: number;
  warmupRatio: number;
  /** Cosine decay down to lr · finalRatio. */
  finalRatio: number;
  weightDecay: number;
  maxGradNorm: number;
  seed: number;
  noise?: TeacherNoise;
  /** The role labels the transcripts are rendered with (default: the prescribed Planner and Solver). */
  roles?: DuoRoles;
}

/**
 * 2,400 steps at 32 problems (76,800 problems, about what a prototype of this task needed: 700-1,000
 * steps at 64 and more). Measured at seed 0 (docs/demo.md): after 1,200 steps the Solver followed the
 * plan it was given only 65% of the time under greedy decoding (loss 0.26), after 2,400 steps 98%
 * (loss 0.12). RL fixes choices, not skills: with an undertrained Solver the team stalled near 0.6.
 */
export const DEFAULT_PRETRAIN: Omit<PretrainConfig, 'seed'> = { steps: 2400, problemsPerStep: 32, lr: 3e-3, warmupRatio: 0.05, finalRatio: 0.1, weightDecay: 0.01, maxGradNorm: 1 };

export interface PretrainProgress {
  step: number;
  steps: number;
  loss: number;
  tokensPerSecond: number;
}

export interface PretrainResult {
  losses: number[];
  seconds: number;
  tokens: number;
}

export async function pretrain(
  engine: Engine,
  tokenizer: CharTokenizer,
  train: Problem[],
  config: PretrainConfig,
  onProgress?: (p: PretrainProgress) => void,
): Promise<PretrainResult> {
  const rng = new Rng(config.seed);
  const schedule = { schedule: 'cosine' as const, lr: config.lr, warmupRatio: config.warmupRatio, finalRatio: config.finalRatio };
  const losses: number[] = [];
  const start = performance.now();
  let tokens = 0;
  await engine.setBaseTrainable(true);
  try {
    for (let step = 0; step < config.steps; step++) {
      const problems = Array.from({ length: config.problemsPerStep }, () => rng.pick(train));
      const batch = transcriptBatch(tokenizer, problems, rng, config.noise, config.roles);
      const out = await engine.forward({ kind: 'base' }, batch, { retainGraph: true });
      const logprobs = out.logprobs!;
      const scored = logprobs.reduce((n, lp) => n + lp.length, 0);
      let sum = 0;
      for (const lp of logprobs) for (let k = 0; k < lp.length; k++) sum += lp[k]!;
      const dLogprobs = logprobs.map((lp) => new Float32Array(lp.length).fill(-1 / scored));
      await engine.backward(out.handle!, { dLogprobs });
      await engine.optimStep(
        { kind: 'base' },
        { lr: learningRate(schedule, step, config.steps), beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: config.weightDecay, maxGradNorm: config.maxGradNorm },
      );
      losses.push(-sum / scored);
      tokens += batch.reduce((n, r) => n + r.tokens.length, 0);
      onProgress?.({ step: step + 1, steps: config.steps, loss: -sum / scored, tokensPerSecond: tokens / ((performance.now() - start) / 1000) });
    }
  } finally {
    await engine.setBaseTrainable(false);
  }
  return { losses, seconds: (performance.now() - start) / 1000, tokens };
}
