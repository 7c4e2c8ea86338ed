// Where a training run reports as it goes, besides RUN/metrics.jsonl (which stays the record a
// resume restores): the console, TensorBoard event files, a CSV file (`log.to`, docs/training.md
// "Watching a run"). The loop makes one call per step and one per held-out evaluation; each tracker
// decides what to show.
import type { StepMetrics } from '../metrics-log.ts';

/** A held-out evaluation of the run's policies before its first step or after its last (src/train/evaluate.ts). */
export interface EvaluationPoint {
  when: 'before' | 'after';
  /** Steps completed when it was taken (0 before training, train.steps after). */
  step: number;
  score: number;
  perSeed: number[];
  problems: number;
}

export interface Tracker {
  /** One step's metrics line, as appended to metrics.jsonl (its `step` is the 0-based step index). */
  step(m: StepMetrics): Promise<void>;
  evaluation(e: EvaluationPoint): Promise<void>;
  /** Flushes and closes what the tracker holds open; the run is over (or stopped). */
  close(): Promise<void>;
}

/** What a tracker is opened with. */
export interface TrackerContext {
  runDir: string;
  /** train.steps. */
  totalSteps: number;
  /** The step this session starts at (0, or the checkpoint a resume continues from). */
  startStep: number;
  /** The metrics lines already in metrics.jsonl (those the resumed checkpoint covers). */
  previous: StepMetrics[];
}

/** Every tracker in turn, as one. */
export function allOf(trackers: readonly Tracker[]): Tracker {
  return {
    async step(m) {
      for (const t of trackers) await t.step(m);
    },
    async evaluation(e) {
      for (const t of trackers) await t.evaluation(e);
    },
    async close() {
      for (const t of trackers) await t.close();
    },
  };
}
