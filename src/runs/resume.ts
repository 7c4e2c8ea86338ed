// Resuming a run: the newest intact checkpoint (src/runs/checkpoint.ts), its configuration snapshot
// compared with the configuration given (src/runs/config-change.ts), its trainables loaded, and
// metrics.jsonl restored to exactly the lines that checkpoint covers (from the copy it holds, so an
// edited or damaged metrics.jsonl is repaired, with a notice).
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Engine } from '../engine/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import { checkpointMetrics, latestCheckpoint, loadCheckpoint, readCheckpointState, type CheckpointState } from './checkpoint.ts';
import { checkConfigChange } from './config-change.ts';
import { removeLeftovers } from './leftovers.ts';
import type { MetricsLog } from './metrics-log.ts';
import type { Notice } from '../core/notice.ts';
import { markRunFolder } from './run-folder.ts';
import { writing } from './write-errors.ts';

export interface Resumed {
  dir: string;
  state: CheckpointState;
}

export interface ResumeOptions {
  /** Apply (and record) a configuration that differs from the checkpoint's, where allowed. */
  acceptConfigChange: boolean;
  notice: Notice;
}

/**
 * Readies the run folder for training: removes leftovers of interrupted writes (the caller holds the
 * run's lock, so ours are stale too), marks it as a run (./run-folder.ts), and checks that its
 * checkpoints folder can be written, so that a read-only one is the one line of ./write-errors.ts
 * before any step is spent rather than at the first checkpoint.
 */
export async function cleanRunFolder(runDir: string, notice: Notice): Promise<void> {
  await writing(runDir, () => removeLeftovers(runDir, notice, { ownToo: true }));
  const checkpoints = join(runDir, 'checkpoints');
  await writing(checkpoints, () => removeLeftovers(checkpoints, notice, { ownToo: true }));
  await markRunFolder(runDir);
  // A checkpoints folder not made yet goes into the run folder just written to.
  if (!existsSync(checkpoints)) return;
  const probe = join(checkpoints, `.write-check.tmp-${process.pid}`);
  await writing(checkpoints, async () => {
    await writeFile(probe, '');
    await rm(probe);
  });
}

/**
 * Loads the run's checkpoint into `engine` and brings metrics.jsonl back to the lines it covers;
 * null when the run has no checkpoint (metrics.jsonl is then emptied for a fresh start).
 */
export async function resumeRun(engine: Engine, runDir: string, config: MarftConfig, log: MetricsLog, options: ResumeOptions): Promise<Resumed | null> {
  const dir = await latestCheckpoint(runDir, options.notice);
  if (!dir) {
    await log.truncate(0);
    return null;
  }
  const snapshot = await readCheckpointState(dir);
  if (snapshot.config) await checkConfigChange(snapshot.config, config, { runDir, step: snapshot.step, accept: options.acceptConfigChange, notice: options.notice });
  const state = await loadCheckpoint(engine, dir, { optimiser: true });
  const copy = await checkpointMetrics(dir);
  if (copy === null) {
    await log.truncate(state.metricsLines);
  } else {
    const live = (await log.lines()).slice(0, state.metricsLines).join('');
    if (live !== copy) options.notice(`metrics.jsonl does not hold the ${state.metricsLines} lines ${basename(dir)} covers (edited, damaged or cut short); restored them from the checkpoint`);
    await log.replace(copy);
  }
  return { dir, state };
}
