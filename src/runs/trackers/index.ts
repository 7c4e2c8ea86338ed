// The trackers a configuration asks for (`log.to`), opened as one (./tracker.ts).
import { join } from 'node:path';
import type { MarftConfig } from '../../config/schema.ts';
import { ConsoleTracker, type ConsoleMode } from './console.ts';
import { CsvTracker } from './csv.ts';
import { TensorBoardTracker } from './tensorboard.ts';
import { allOf, type Tracker, type TrackerContext } from './tracker.ts';

export type { EvaluationPoint, Tracker, TrackerContext } from './tracker.ts';
export { allOf } from './tracker.ts';
export { ConsoleTracker, type ConsoleOptions, type ConsoleMode } from './console.ts';
export { CsvTracker } from './csv.ts';
export { TensorBoardTracker, TENSORBOARD_DIR, EVAL_TAG } from './tensorboard.ts';

/** The CSV copy of metrics.jsonl. */
export const CSV_FILE = 'metrics.csv';

/**
 * The console's mode: `progress` false silences it, true asks for the bar; unset, the bar on a
 * terminal and plain lines elsewhere.
 */
export function consoleMode(progress: boolean | undefined, isTerminal = process.stderr.isTTY === true): ConsoleMode {
  if (progress === false) return 'off';
  return progress === true || isTerminal ? 'bar' : 'lines';
}

/** Opens the trackers of `config.log.to` for one training session. */
export async function openTrackers(config: MarftConfig, context: TrackerContext, progress?: boolean): Promise<Tracker> {
  const trackers: Tracker[] = [];
  const to = new Set(config.log.to);
  if (to.has('console')) {
    trackers.push(new ConsoleTracker({ mode: consoleMode(progress), totalSteps: context.totalSteps, startStep: context.startStep, every: config.log.every, everySeconds: config.log.everySeconds }));
  }
  if (to.has('csv')) trackers.push(await CsvTracker.open(join(context.runDir, CSV_FILE), context.previous));
  if (to.has('tensorboard')) trackers.push(await TensorBoardTracker.open(context.runDir, context.startStep));
  return allOf(trackers);
}
