// TensorBoard event files in RUN/tensorboard/ (`log.to: [tensorboard]`), written directly in the
// format TensorBoard reads (./event-file.ts), so that neither TensorFlow nor Python is needed.
// `tensorboard --logdir RUN/tensorboard` shows them; W&B imports them with
// `wandb sync --sync-tensorboard RUN/tensorboard` (docs/training.md, "Watching a run").
//
// Steps: a metric of step index s (metrics.jsonl's `step`) is written at global step s + 1, the
// steps completed when it was measured, so that the held-out score before training sits at step 0
// and the one after at train.steps, on one axis with the steps between.
// Tags: each numeric metric under its own key (`score_mean`, `reward/planner`,
// `explained_variance/pos0`); held-out scores under `eval/score` (before, after, every
// train.evalEvery). Strings and nulls are not scalars and are left out.
//
// Each session writes a file of its own. A resumed session starts its file with SessionLog START at
// the first step it will write, which tells TensorBoard to drop what an earlier session wrote from
// that step on (the steps after the checkpoint, which the resumed run computes again).
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { StepMetrics } from '../metrics-log.ts';
import { fileVersionEvent, scalarsEvent, sessionStartEvent, tfRecord, type ScalarValue } from './event-file.ts';
import type { EvaluationPoint, Tracker } from './tracker.ts';
import { writing } from '../write-errors.ts';

/** The folder of a run's event files. */
export const TENSORBOARD_DIR = 'tensorboard';

/** The tag of held-out scores. */
export const EVAL_TAG = 'eval/score';

/** The scalars of one metrics line (numbers only; eval_score under EVAL_TAG). */
export function scalarsOf(m: StepMetrics): ScalarValue[] {
  const out: ScalarValue[] = [];
  for (const [k, v] of Object.entries(m)) {
    if (k === 'step' || typeof v !== 'number') continue;
    out.push({ tag: k === 'eval_score' ? EVAL_TAG : k, value: v });
  }
  return out;
}

const wallTime = (): number => Date.now() / 1000;

/** Tells apart the files of sessions this process opens within one second (the last part of the name). */
let filesOpened = 0;

export class TensorBoardTracker implements Tracker {
  /** Global steps this session wrote a held-out score at (the last step's train.evalEvery score is also the score after training). */
  private readonly evalSteps = new Set<number>();

  private constructor(private readonly handle: FileHandle, readonly file: string) {}

  /** Creates RUN/tensorboard/events.out.tfevents.<seconds>.<host>.<pid>.<n>; `startStep` > 0 marks a resume. */
  static async open(runDir: string, startStep: number): Promise<TensorBoardTracker> {
    const dir = join(runDir, TENSORBOARD_DIR);
    await writing(dir, () => mkdir(dir, { recursive: true }));
    const now = wallTime();
    // The name TensorFlow's writers use; TensorBoard reads files whose name contains "tfevents", in name order.
    const file = join(dir, `events.out.tfevents.${Math.floor(now)}.${hostname()}.${process.pid}.${filesOpened++}`);
    const handle = await writing(file, () => open(file, 'a'));
    const tracker = new TensorBoardTracker(handle, file);
    await tracker.record(fileVersionEvent(now));
    if (startStep > 0) await tracker.record(sessionStartEvent(now, startStep + 1));
    return tracker;
  }

  private async record(event: Uint8Array): Promise<void> {
    // One write per record, so that a reader never sees half of one unless the process dies mid-write
    // (TensorBoard then stops at the damaged record).
    await writing(this.file, () => this.handle.write(tfRecord(event)));
  }

  async step(m: StepMetrics): Promise<void> {
    const values = scalarsOf(m);
    if (typeof m.eval_score === 'number') this.evalSteps.add(Number(m.step) + 1);
    if (values.length > 0) await this.record(scalarsEvent(wallTime(), Number(m.step) + 1, values));
  }

  async evaluation(e: EvaluationPoint): Promise<void> {
    if (this.evalSteps.has(e.step)) return;
    this.evalSteps.add(e.step);
    await this.record(scalarsEvent(wallTime(), e.step, [{ tag: EVAL_TAG, value: e.score }]));
  }

  async close(): Promise<void> {
    await this.handle.sync().catch(() => undefined);
    await this.handle.close();
  }
}
