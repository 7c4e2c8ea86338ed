// What a task offers MAS-OPD when `marft train` runs it (algorithm: mas-opd): the Flex-MG workflow
// whose agents carry roles (one student adapter per role), fresh training environments per step, the
// PAC rules, and the students' tokenizer (the teacher's must match it). The interface belongs to the
// layer that calls it, as the Task interface belongs to src/train/: tasks import it from here.
import type { Task } from '../train/task.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import type { TaskEnv, Workflow } from '../workflow/index.ts';
import type { Attributor } from './pac.ts';

export interface DistillationSource {
  workflow: Workflow;
  /** `count` fresh single-use environments for a step (drawn reproducibly from `seed`). */
  trainEnvs(count: number, seed: number): TaskEnv[];
  /** PAC: the verdict of a finished turn from the episode (whose info holds the recorded `turns`). */
  attribute: Attributor | null;
  /** The students' tokenizer: the one the rollout encodes with and the teacher's is checked against. */
  tokenizer: Tokenizer;
}

/** A trainer Task that MAS-OPD can also train. */
export interface DistillableTask extends Task {
  distillation(): DistillationSource;
}

/** The task's MAS-OPD view, or null when it offers none (the toy tasks: no workflow, no roles). */
export function distillationOf(task: Task): DistillationSource | null {
  const candidate = task as Partial<DistillableTask>;
  return typeof candidate.distillation === 'function' ? candidate.distillation() : null;
}
