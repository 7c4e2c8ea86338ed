// What train() (./trainer.ts) calls once per step, by the plan's kind: the loop around it (run lock,
// resume, divergence guards, evaluation, metrics, checkpoints) is the same for every algorithm; what
// a step does (MARFT's rollout, credit and PPO update, or MAS-OPD's rollout, teacher scoring and
// distillation update, src/opd/opd-run-step.ts) is the step function's.
import type { AlgorithmPlan } from '../algorithms/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import type { Engine, SamplingEngine } from '../engine/types.ts';
import type { StepMetrics } from '../runs/metrics-log.ts';
import type { Notice } from '../core/notice.ts';
import type { Task } from './task.ts';
import type { TrainerState } from '../runs/trainer-state.ts';

/** Everything a run's steps share. */
export interface StepRun {
  engine: Engine;
  task: Task;
  config: MarftConfig;
  plan: AlgorithmPlan;
  /** The frozen teacher of a distillation run (algorithm: mas-opd); absent otherwise. */
  teacher?: SamplingEngine;
  notice: Notice;
}

/** Runs step `step` (0-based) from the carried state; returns its metrics line and the next state. */
export type StepFunction = (step: number, state: TrainerState) => Promise<{ metrics: StepMetrics; state: TrainerState }>;

/** Checks what the kind needs (before anything is written into the run folder) and returns its step function. */
export type StepKind = (run: StepRun) => Promise<StepFunction>;
