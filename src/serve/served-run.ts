// A trained run opened for serving: the engine with the checkpoint's adapters (src/run/trained-run.ts,
// the path marft eval takes), the model table, the tokenizer the agents were trained with (the workflow
// task's, else the model folder's; none for a task of token ids) and, with --team, the team model.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SamplingEngine } from '../engine/types.ts';
import { findTrainedRun, openTrainedRun, TrainedRunError, type OpenedRun } from '../run/trained-run.ts';
import { WorkflowTask } from '../tasks/workflow-task.ts';
import { loadTokenizer } from '../tokenizer/index.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { servedModels, type ServedModel } from './models.ts';
import { TeamModel } from './team.ts';

export interface ServedRun {
  run: OpenedRun;
  engine: SamplingEngine;
  models: ServedModel[];
  tokenizer: Tokenizer | null;
  team: TeamModel | null;
}

function runTokenizer(run: OpenedRun): Tokenizer | null {
  if (run.bundle.task instanceof WorkflowTask) return run.bundle.task.tokenizer;
  const dir = run.config.model.path;
  if (dir && existsSync(join(dir, 'tokenizer.json'))) return loadTokenizer(dir);
  return null;
}

/** Opens RUN_OR_CHECKPOINT for `marft serve`; `team` adds the team model (a workflow task's run only). */
export async function openServedRun(given: string, options: { team: boolean }): Promise<ServedRun> {
  const found = await findTrainedRun(given);
  const run = await openTrainedRun(found);
  try {
    const task = run.bundle.task;
    if (options.team && !(task instanceof WorkflowTask)) throw new TrainedRunError(`--team serves a workflow with its environment: it needs a run of task 'workflow' (this run's task is '${run.config.task.name}')`);
    const models = servedModels(run.policies, options.team);
    const team = options.team ? new TeamModel(task as WorkflowTask, run.policies, run.config) : null;
    return { run, engine: run.engine, models, tokenizer: runTokenizer(run), team };
  } catch (err) {
    await run.engine.dispose();
    throw err;
  }
}
