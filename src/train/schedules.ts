// Learning-rate schedules (App. B): the actor uses cosine decay with a warmup proportion (0.001)
// and a final-to-initial ratio (0.05); the critic a constant rate after the same warmup.
//
// warmupSteps = floor(warmupRatio · totalSteps). During warmup lr(s) = base · (s + 1) / (warmupSteps + 1)
// (never 0, so no step is wasted); afterwards, with p = (s − warmupSteps) / max(1, totalSteps − 1 − warmupSteps):
//   cosine:   lr(s) = base · (ρ + (1 − ρ) · ½(1 + cos(π·min(p, 1))))   (ρ = final/initial ratio)
//   constant: lr(s) = base
// so the cosine schedule reaches exactly base·ρ at the last step (s = totalSteps − 1).

import type { ScheduleKind } from '../config/choices.ts';
export type { ScheduleKind };

export interface ScheduleConfig {
  schedule: ScheduleKind;
  lr: number;
  warmupRatio: number;
  /** ρ, cosine only. */
  finalRatio: number;
}

export function warmupSteps(config: ScheduleConfig, totalSteps: number): number {
  return Math.floor(config.warmupRatio * totalSteps);
}

/** The learning rate of step s (0-based) of a run of totalSteps optimiser steps. */
export function learningRate(config: ScheduleConfig, step: number, totalSteps: number): number {
  const warm = warmupSteps(config, totalSteps);
  if (step < warm) return (config.lr * (step + 1)) / (warm + 1);
  if (config.schedule === 'constant') return config.lr;
  const p = Math.min(1, (step - warm) / Math.max(1, totalSteps - 1 - warm));
  return config.lr * (config.finalRatio + (1 - config.finalRatio) * 0.5 * (1 + Math.cos(Math.PI * p)));
}
