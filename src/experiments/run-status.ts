// Where one training run of an experiment stands, read from its run folder (docs/reliability.md):
// never started, stopped part-way (resumed by `marft train --resume`), or finished (left alone).
import { existsSync } from 'node:fs';
import { ExperimentError } from './experiment-error.ts';
import type { MarftConfig } from '../config/schema.ts';
import { latestCheckpoint, readCheckpointState } from '../runs/checkpoint.ts';
import { configDifferences } from '../runs/config-change.ts';
import type { Notice } from '../core/notice.ts';

export type RunStatus =
  | { kind: 'new' }
  | { kind: 'partial'; step: number; steps: number }
  | { kind: 'finished'; step: number; checkpoint: string };

/**
 * The run in `runDir` against the configuration the experiment would train it with. A run trained
 * with another configuration (the experiment file or its --set changed since) is refused in one line:
 * mixing its results with the new configuration's would make a table of two experiments.
 */
export async function runStatus(where: string, runDir: string, config: MarftConfig, notice: Notice): Promise<RunStatus> {
  if (!existsSync(runDir)) return { kind: 'new' };
  const ckpt = await latestCheckpoint(runDir, notice);
  if (!ckpt) return { kind: 'new' };
  const state = await readCheckpointState(ckpt);
  if (state.config) {
    // A key the checkpoint lacks was added to the schema since it was written: its default is no change.
    const diff = configDifferences(state.config, config).filter((d) => d.old !== undefined);
    if (diff.length > 0) {
      const listed = diff.slice(0, 3).map((d) => `${d.key} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`).join(', ');
      throw new ExperimentError(`${where}: ${runDir} was trained with another configuration (${listed}${diff.length > 3 ? `, and ${diff.length - 3} more` : ''}); give the experiment another --out, or move that folder away to train it again`);
    }
  }
  if (state.step >= config.train.steps) return { kind: 'finished', step: state.step, checkpoint: ckpt };
  return { kind: 'partial', step: state.step, steps: config.train.steps };
}
