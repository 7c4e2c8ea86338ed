// From a validated configuration to the objects a run needs: the task (by registered name) and
// the engine (the tabular engine, a Hugging Face model folder, the run's saved base, or a model the
// task builds itself — which is then saved into the run folder so a resumed run or an evaluation
// loads the identical base).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../engine/types.ts';
import { loadEngine } from '../engine/index.ts';
import type { MarftConfig } from '../config/schema.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { TabularEngine } from './tabular-engine.ts';
import { registeredTasks, taskFactory, type TaskBundle } from './task.ts';
import './toy-tasks.ts';
import '../tasks/index.ts';

export interface RunObjects {
  bundle: TaskBundle;
  engine: Engine;
}

export async function buildTask(config: MarftConfig): Promise<TaskBundle> {
  const factory = taskFactory(config.task.name);
  if (!factory) throw new ConfigError(`task.name: got "${config.task.name}", expected one of ${registeredTasks().map((t) => `'${t}'`).join(', ')}`);
  try {
    return await factory(config.task.options, { modelPath: config.model.path });
  } catch (err) {
    // Tasks report bad options as plain errors that name the key.
    if (err instanceof Error && err.message.startsWith('task.options')) throw new ConfigError(err.message);
    throw err;
  }
}

/** The engine of a run; `runDir` (when given) holds or receives the base model a task built. */
export async function buildEngine(config: MarftConfig, bundle: TaskBundle, runDir?: string): Promise<Engine> {
  if (config.model.precision !== 'fp32') throw new ConfigError(`model.precision: got "${config.model.precision}", expected 'fp32' (the ${config.model.engine} engine computes in fp32; bf16 needs the torch engine)`);
  if (config.model.engine === 'tabular') return new TabularEngine(bundle.vocabSize);
  if (config.model.path) {
    if (!existsSync(join(config.model.path, 'config.json'))) throw new ConfigError(`model.path: ${config.model.path} holds no config.json (a Hugging Face model folder is expected)`);
    return loadEngine(config.model.path);
  }
  const saved = runDir ? join(runDir, 'base') : undefined;
  if (saved && existsSync(join(saved, 'config.json'))) return loadEngine(saved);
  if (!bundle.buildEngine) throw new ConfigError(`model.path: task '${config.task.name}' builds no model of its own; name a Hugging Face model folder`);
  const engine = await bundle.buildEngine(config.seed);
  if (saved) await engine.saveBase(saved);
  return engine;
}

export async function buildRun(config: MarftConfig, runDir?: string): Promise<RunObjects> {
  const bundle = await buildTask(config);
  return { bundle, engine: await buildEngine(config, bundle, runDir) };
}
