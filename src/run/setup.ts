// From a validated configuration to the objects a run needs: the task (by its name in
// ./task-registry.ts) and
// the engine (the tabular engine, a Hugging Face model folder, the run's saved base, or a model the
// task builds itself — which is then saved into the run folder so a resumed run or an evaluation
// loads the identical base). Which engine opens the model is `model.engine`, mapped to an engine by
// openEngine (src/engine/open.ts). Tasks build their own models with the embedded engine; the torch
// engine then loads the saved copy (RUN/base, or a temporary folder when there is no run folder).
//
// The saved base (RUN/base) is written to a temporary folder with a manifest and renamed into
// place, so it exists complete or not at all. A base without a matching manifest (a kill during the
// write of an older version, a truncated file) is removed and rebuilt with a notice: the task builds
// it deterministically from the seed, so the rebuilt base is the one the run trained on.
//
// A served model (model.engine openai or vllm, src/engine/open.ts's openSamplingEngine) samples and
// scores but does not train: only buildSamplingModel (marft eval --base) opens one; buildEngine,
// which every training run and checkpoint evaluation goes through, refuses it in one line.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, SamplingEngine } from '../engine/types.ts';
import {
  defaultVllmPython, EmbeddedEngine, openEngine, openSamplingEngine, SamplerMismatchError, SERVED_ENGINE_KINDS, ServedModelChoiceError,
  type EmbeddedEngineOptions, type EngineSpec, type SamplingEngineSpec, type ServedEngineKind, type TorchEngineOptions,
} from '../engine/index.ts';
import type { MarftConfig } from '../config/schema.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { claimSavedBase, saveBaseAtomic } from '../runs/base-folder.ts';
import { removeLeftovers } from '../runs/leftovers.ts';
import { stderrNotice, type Notice } from '../core/notice.ts';
import type { TaskBundle } from '../train/task.ts';
import { checkModelFolder } from './model-folder.ts';
import { didYouMean } from '../core/did-you-mean.ts';
import { registeredTasks, taskFactory } from './task-registry.ts';

export interface RunObjects {
  bundle: TaskBundle;
  engine: Engine;
}

export async function buildTask(config: MarftConfig): Promise<TaskBundle> {
  const factory = taskFactory(config.task.name);
  if (!factory) {
    const hint = didYouMean(config.task.name, registeredTasks(), (t) => `'${t}'`);
    throw new ConfigError(`task.name: got "${config.task.name}", expected one of ${registeredTasks().map((t) => `'${t}'`).join(', ')}${hint ? `; ${hint}` : ''}`);
  }
  // Before the task reads anything from it (the workflow task takes its tokenizer from model.path): a
  // missing folder is said as such, under the key the user wrote (its config.json: buildEngine).
  if (config.model.path) checkModelFolder(config.model.path, 'model.path', true);
  try {
    return await factory(config.task.options, { modelPath: config.model.path });
  } catch (err) {
    // Tasks report bad options as plain errors that name the key.
    if (err instanceof Error && err.message.startsWith('task.options')) throw new ConfigError(err.message);
    throw err;
  }
}

/** The weights' dtype that model.precision names, for the torch worker and a vLLM server. */
export const weightDtype = (model: MarftConfig['model']): 'bfloat16' | 'float32' => (model.precision === 'bf16' ? 'bfloat16' : 'float32');

/** The torch engine's options on this machine from model.* (device, processes, threads, precision): the students' and a torch teacher's. */
export function localTorchOptions(model: MarftConfig['model']): TorchEngineOptions {
  return { device: model.device, nprocPerNode: model.processes, threads: model.threads, dtype: weightDtype(model) };
}

/** The embedded engine's sampler options from model.* (a task-built engine gets them through withGenerateOptions). */
function embeddedOptions(model: MarftConfig['model']): EmbeddedEngineOptions {
  return model.maxSequences > 0 ? { maxSequences: model.maxSequences } : {};
}

/** The engine `model.engine` names, over the Hugging Face model folder `dir`; with sampler.engine vllm, wrapped so that vLLM samples. */
function modelSpec(config: MarftConfig, dir: string): EngineSpec {
  const model = config.model;
  const trainer: Extract<EngineSpec, { kind: 'embedded' | 'torch' }> = model.engine !== 'torch' ? { kind: 'embedded', modelDir: dir, options: embeddedOptions(model) } : {
    kind: 'torch', modelDir: dir,
    options: { ...localTorchOptions(model), ...(model.nodes > 1 ? { nnodes: model.nodes, rdzvEndpoint: model.rendezvous } : {}) },
  };
  if (config.sampler.engine !== 'vllm') return trainer;
  return {
    kind: 'vllm', trainer,
    server: { python: config.sampler.python || defaultVllmPython(), maxLoraRank: config.policy.loraRank, maxLoras: config.sampler.maxLoras, dtype: weightDtype(model) },
    check: { tolerance: config.sampler.tolerance, toleranceKey: 'sampler.tolerance' },
  };
}

/** Opens the configured engine on `dir`; a failure is one line naming the key it comes from. */
async function openModel(config: MarftConfig, dir: string, key: string): Promise<Engine> {
  try {
    return await openEngine(modelSpec(config, dir));
  } catch (err) {
    // The user's folder (weights missing, an architecture not supported) or the torch engine's or
    // vLLM's environment: theirs to fix, in one line (as marft logprobs does).
    if (err instanceof SamplerMismatchError) throw err;
    const from = config.sampler.engine === 'vllm' ? 'sampler.engine: vllm' : config.model.engine === 'torch' ? 'model.engine: torch' : key;
    throw new ConfigError(`${from}: ${(err as Error).message}`);
  }
}

/**
 * The engine of a run; `runDir` (when given) holds or receives the base model a task built. Leftovers
 * of interrupted base writes are removed and a half-written base is rebuilt, each with a notice.
 */
export async function buildEngine(config: MarftConfig, bundle: TaskBundle, runDir?: string, notice: Notice = stderrNotice): Promise<Engine> {
  assertTrainableModel(config);
  const model = config.model;
  if (model.precision !== 'fp32' && model.engine !== 'torch') throw new ConfigError(`model.precision: got "${model.precision}", expected 'fp32' (the ${model.engine} engine computes in fp32; bf16 needs the torch engine)`);
  if (model.engine === 'tabular' && config.sampler.engine === 'vllm') throw new ConfigError('sampler.engine: vllm needs model.engine embedded or torch (a lookup table has no model to serve)');
  if (model.engine === 'tabular') return openEngine({ kind: 'tabular', vocabSize: bundle.vocabSize });
  if (model.path) {
    checkModelFolder(model.path, 'model.path');
    return openModel(config, model.path, 'model.path');
  }
  const saved = runDir ? join(runDir, 'base') : undefined;
  if (runDir && saved) {
    await removeLeftovers(runDir, notice);
    const state = await claimSavedBase(saved);
    if (state === 'intact') return openModel(config, saved, 'model.path');
    if (state !== 'absent') notice(`${saved} is incomplete (${state.damaged}); a write was interrupted or the folder was damaged, so it is rebuilt from the seed`);
  }
  if (!bundle.buildEngine) throw new ConfigError(`model.path: task '${config.task.name}' builds no model of its own; name a Hugging Face model folder`);
  const built = await bundle.buildEngine(config.seed);
  if (built instanceof EmbeddedEngine) built.withGenerateOptions(embeddedOptions(model));
  if (model.engine === 'embedded' && config.sampler.engine !== 'vllm') {
    if (saved) await saveBaseAtomic(built, saved);
    return built;
  }
  // The torch engine loads the task's model from a folder: the run's base, or a temporary copy that
  // is removed once the worker has loaded it.
  const dir = saved ?? join(await mkdtemp(join(tmpdir(), 'marft-base-')), 'base');
  try {
    await saveBaseAtomic(built, dir);
  } finally {
    await built.dispose();
  }
  try {
    return await openModel(config, dir, 'model.path');
  } finally {
    if (!saved) await rm(join(dir, '..'), { recursive: true, force: true });
  }
}

function isServed(kind: MarftConfig['model']['engine']): kind is ServedEngineKind {
  return (SERVED_ENGINE_KINDS as readonly string[]).includes(kind);
}

/** Refuses a served model.engine where a model must train or load a checkpoint's adapters (marft train, eval --checkpoint). */
export function assertTrainableModel(config: MarftConfig): void {
  const kind = config.model.engine;
  if (isServed(kind)) throw new ConfigError(`model.engine: ${kind} serves a model for sampling only (marft eval CONFIG --base, the prompt-only rows); training and checkpoints need model.engine embedded or torch`);
}

/** The served model of model.engine openai or vllm, on model.path (its tokenizer and config.json). */
function servedSpec(config: MarftConfig, kind: ServedEngineKind): SamplingEngineSpec {
  const model = config.model;
  if (!model.path) throw new ConfigError(`model.path: model.engine ${kind} needs the served model's Hugging Face folder (its tokenizer and config.json give what the server does not report)`);
  checkModelFolder(model.path, 'model.path');
  if (kind === 'vllm') return { kind: 'vllm-serve', modelDir: model.path, server: { python: config.sampler.python || defaultVllmPython(), dtype: weightDtype(model) } };
  if (!model.url) throw new ConfigError('model.url: model.engine openai needs the server\'s OpenAI API root, e.g. http://127.0.0.1:8000/v1');
  return { kind: 'openai', baseUrl: model.url, model: model.servedModel, modelDir: model.path };
}

/**
 * What samples for an evaluation of the untrained system (marft eval --base): a served model when
 * model.engine names one, else the run's engine (buildEngine).
 */
export async function buildSamplingModel(config: MarftConfig, bundle: TaskBundle): Promise<SamplingEngine> {
  const kind = config.model.engine;
  if (!isServed(kind)) return buildEngine(config, bundle);
  const spec = servedSpec(config, kind);
  try {
    return await openSamplingEngine(spec);
  } catch (err) {
    if (err instanceof ServedModelChoiceError) throw new ConfigError(`model.servedModel: ${err.message}`);
    throw new ConfigError(`model.engine: ${kind}: ${(err as Error).message.split('\n')[0]}`);
  }
}

export async function buildRun(config: MarftConfig, runDir?: string, notice: Notice = stderrNotice): Promise<RunObjects> {
  const bundle = await buildTask(config);
  return { bundle, engine: await buildEngine(config, bundle, runDir, notice) };
}
