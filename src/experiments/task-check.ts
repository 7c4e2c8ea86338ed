// The checks of a configuration's task that need no model: the task is registered and, for the
// workflow task, its options parse and name known datasets of one domain. A column pointing at a
// misspelt benchmark (task.options.heldOutDatset) would otherwise fail only when that column is
// first evaluated, after hours of training, or (an unknown key being refused only there) not at all.
import { DATASETS } from '../env/datasets/index.ts';
import type { MarftConfig } from '../config/schema.ts';
import { taskFactory, registeredTasks } from '../run/task-registry.ts';
import { TaskOptionError, type Options } from '../tasks/options.ts';
import { parseWorkflowTaskOptions } from '../tasks/workflow-task.ts';

/** Throws a one-line message (no prefix) when the task part of `config` cannot run. */
export function checkTask(config: MarftConfig): void {
  const name = config.task.name;
  if (!taskFactory(name)) throw new TaskOptionError(`task.name: unknown task '${name}' (known: ${registeredTasks().join(', ')})`);
  if (name !== 'workflow') return;
  const options = parseWorkflowTaskOptions((config.task.options ?? {}) as Options);
  const dataset = DATASETS[options.dataset.name];
  if (!dataset) throw new TaskOptionError(`task.options.dataset: unknown dataset '${options.dataset.name}' (known: ${Object.keys(DATASETS).join(', ')})`);
  const heldOut = options.split.heldOut;
  if (!heldOut) return;
  const other = DATASETS[heldOut.name];
  if (!other) throw new TaskOptionError(`task.options.heldOutDataset: unknown dataset '${heldOut.name}' (known: ${Object.keys(DATASETS).join(', ')})`);
  if (other.domain !== dataset.domain) throw new TaskOptionError(`task.options.heldOutDataset: a ${other.domain} dataset cannot evaluate a task trained on ${dataset.domain} problems`);
}
