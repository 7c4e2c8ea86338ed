// What was trained, found from the path a user gives (marft serve, marft export): a checkpoint folder
// (RUN/checkpoints/step-N, it holds state.json) or a run folder (its latest intact checkpoint,
// src/runs/checkpoint.ts), with the configuration the checkpoint was trained with (its state.json's
// snapshot, else the run's config.json), the agents' adapters (the algorithm's plan: agent → adapter)
// and where the base model lives (model.path, or the base the task built into RUN/base). openTrainedRun
// then opens it the way marft eval does (buildRun, loadCheckpoint), so a served or exported agent is
// exactly the evaluated one.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { MarftConfig } from '../config/schema.ts';
import { loadConfig, parseConfig } from '../config/load.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { latestCheckpoint, loadCheckpoint, readCheckpointState, type CheckpointState } from '../runs/checkpoint.ts';
import type { Engine } from '../engine/types.ts';
import type { TaskBundle } from '../train/task.ts';
import { planFor } from '../algorithms/check.ts';
import { buildRun, buildTask } from './setup.ts';

export interface TrainedRun {
  /** The checkpoint folder (RUN/checkpoints/step-N). */
  checkpoint: string;
  /** The run folder above it. */
  runDir: string;
  state: CheckpointState;
  config: MarftConfig;
}

export interface OpenedRun extends TrainedRun {
  engine: Engine;
  bundle: TaskBundle;
  /** The adapter that acts for each agent (every agent of the task, in its order). */
  policies: Record<string, string>;
}

/** A path that is neither a checkpoint nor a run folder, or a run whose configuration cannot be read: one line. */
export class TrainedRunError extends ConfigError {}

/** The checkpoint and configuration `given` names (a checkpoint folder, or a run folder: its latest checkpoint). */
export async function findTrainedRun(given: string): Promise<TrainedRun> {
  const path = resolve(given);
  if (!existsSync(path)) throw new TrainedRunError(`${given}: no such folder`);
  if (!statSync(path).isDirectory()) throw new TrainedRunError(`${given}: is a file; a run folder or a checkpoint folder (RUN/checkpoints/step-N) is expected`);
  let checkpoint = path;
  if (!existsSync(join(path, 'state.json'))) {
    const latest = await latestCheckpoint(path);
    if (!latest) throw new TrainedRunError(`${given} is neither a checkpoint (no state.json) nor a run folder with checkpoints`);
    checkpoint = latest;
  }
  const state = await readCheckpointState(checkpoint);
  const runDir = dirname(dirname(checkpoint));
  return { checkpoint, runDir, state, config: await trainedConfig(state, runDir, checkpoint) };
}

/** The checkpoint's own configuration snapshot; a checkpoint of an older run without one: the run's config.json. */
async function trainedConfig(state: CheckpointState, runDir: string, checkpoint: string): Promise<MarftConfig> {
  if (state.config) {
    try {
      return parseConfig(state.config);
    } catch (err) {
      throw new TrainedRunError(`${checkpoint}/state.json: its configuration does not validate (${(err as Error).message})`);
    }
  }
  const file = join(runDir, 'config.json');
  if (!existsSync(file)) throw new TrainedRunError(`${checkpoint}: its state.json holds no configuration and ${file} does not exist`);
  return loadConfig(file);
}

/** The Hugging Face folder of the run's base model: model.path, else the base the task built (RUN/base). */
export function baseModelDir(run: TrainedRun): string {
  if (run.config.model.path) return run.config.model.path;
  const saved = join(run.runDir, 'base');
  if (!existsSync(join(saved, 'config.json'))) throw new TrainedRunError(`${run.runDir}: the configuration names no model.path and the run holds no base/ folder`);
  return saved;
}

/** The agents' adapters of the run's algorithm (agent → adapter), each checked to be in the checkpoint. */
export function trainedPolicies(run: TrainedRun, bundle: TaskBundle): Record<string, string> {
  const { policies } = planFor(run.config, bundle.task);
  for (const [agent, adapter] of Object.entries(policies)) {
    if (!run.state.adapters.includes(adapter)) throw new TrainedRunError(`${run.checkpoint}: agent '${agent}' acts with adapter '${adapter}', which the checkpoint does not hold (it holds: ${run.state.adapters.join(', ') || 'none'})`);
  }
  return policies;
}

/** The task and the agents' adapters, without opening an engine (marft export). */
export async function trainedTask(run: TrainedRun): Promise<{ bundle: TaskBundle; policies: Record<string, string> }> {
  const bundle = await buildTask(run.config);
  return { bundle, policies: trainedPolicies(run, bundle) };
}

/** The engine with the checkpoint's adapters loaded, the task and the agents' adapters: what marft eval scores. */
export async function openTrainedRun(run: TrainedRun): Promise<OpenedRun> {
  const { engine, bundle } = await buildRun(run.config, existsSync(join(run.runDir, 'base')) ? run.runDir : undefined);
  try {
    const policies = trainedPolicies(run, bundle);
    await loadCheckpoint(engine, run.checkpoint, { optimiser: false });
    return { ...run, engine, bundle, policies };
  } catch (err) {
    await engine.dispose();
    throw err;
  }
}
