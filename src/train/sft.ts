// Supervised fine-tuning of a base model's full parameters on a stream of batches: next-token
// cross-entropy on the replies, through the engine interface (the same steps as the demo's
// pretraining loop, src/tasks/arith-duo/pretrain.ts, which is tied to that demo's corpus). Used by the
// MAS-OPD demo's teacher and students and by scripts/make-student.ts.
import type { Engine, ScoreRequest } from '../engine/types.ts';
import { learningRate } from './schedules.ts';

export interface SftConfig {
  steps: number;
  lr: number;
  warmupRatio: number;
  finalRatio: number;
  weightDecay: number;
  maxGradNorm: number;
}

export const DEFAULT_SFT: Omit<SftConfig, 'steps'> = { lr: 3e-3, warmupRatio: 0.05, finalRatio: 0.1, weightDecay: 0.01, maxGradNorm: 1 };

export async function sft(engine: Engine, batch: (step: number) => ScoreRequest[] | Promise<ScoreRequest[]>, config: SftConfig, onStep?: (step: number, loss: number) => void): Promise<number[]> {
  const schedule = { schedule: 'cosine' as const, lr: config.lr, warmupRatio: config.warmupRatio, finalRatio: config.finalRatio };
  const losses: number[] = [];
  await engine.setBaseTrainable(true);
  try {
    for (let step = 0; step < config.steps; step++) {
      const requests = await batch(step);
      const out = await engine.forward({ kind: 'base' }, requests, { retainGraph: true });
      const logprobs = out.logprobs!;
      const scored = logprobs.reduce((n, lp) => n + lp.length, 0);
      let sum = 0;
      for (const lp of logprobs) for (let k = 0; k < lp.length; k++) sum += lp[k]!;
      await engine.backward(out.handle!, { dLogprobs: logprobs.map((lp) => new Float32Array(lp.length).fill(-1 / scored)) });
      await engine.optimStep({ kind: 'base' }, { lr: learningRate(schedule, step, config.steps), beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: config.weightDecay, maxGradNorm: config.maxGradNorm });
      losses.push(-sum / scored);
      onStep?.(step + 1, -sum / scored);
    }
  } finally {
    await engine.setBaseTrainable(false);
  }
  return losses;
}
