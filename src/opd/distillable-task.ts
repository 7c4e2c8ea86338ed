// What a task offers MAS-OPD when `marft train` runs it (algorithm: mas-opd): the Flex-MG workflow
// whose agents carry roles (one student adapter per role), fresh training environments per step, the
// PAC rules, and the students' tokenizer (the teacher's must match it). The interface belongs to the
// layer that calls it, as the Task interface belongs to rl: tasks import it from here.
import type { Task } from '../train/task.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import type { OpdTask } from './opd-train.ts';

export interface DistillationSource extends OpdTask {
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
