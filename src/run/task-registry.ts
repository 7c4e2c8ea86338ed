// Every task a configuration can name, in one place: `task.name` → the factory that turns
// `task.options` into a TaskBundle (src/train/task.ts). Adding a task is one line here; no task file
// registers itself when imported, so what `marft train`, `marft eval` and `marft demo` accept is the
// same list whichever modules happened to load first.
//
// It sits with the run wiring, above both places tasks are defined: src/tasks (the workflow task,
// the toy tasks, the study tasks arith-duo, arith-pair and code-pair).
// The training loop (src/train/) drives a Task and knows no names.
import { arithDuo } from '../tasks/arith-duo/arith-task.ts';
import { arithPair } from '../tasks/arith-pair/arith-pair-task.ts';
import { codePair } from '../tasks/code-pair/code-pair-task.ts';
import type { TaskFactory } from '../train/task.ts';
import { bandit } from '../tasks/toy/bandit.ts';
import { coordinationGame } from '../tasks/toy/coordination-game.ts';
import { relayGame } from '../tasks/toy/relay-game.ts';
import { workflowTask } from '../tasks/workflow-task.ts';

interface TaskEntry {
  factory: TaskFactory;
  /** Its bundle builds a MAS-OPD teacher when teacher.path is empty (TaskBundle.buildTeacher): checks made before a task is built need to know. */
  buildsTeacher?: boolean;
}

const tasks = new Map<string, TaskEntry>([
  ['workflow', { factory: workflowTask }],
  ['coordination-game', { factory: coordinationGame }],
  ['bandit', { factory: bandit }],
  ['relay-game', { factory: relayGame }],
  ['arith-duo', { factory: arithDuo }],
  ['arith-pair', { factory: arithPair, buildsTeacher: true }],
  ['code-pair', { factory: codePair }],
]);

/** Makes a task of one's own code available to configurations built in the same process (src/run/setup.ts). */
export function registerTask(name: string, factory: TaskFactory, options: { buildsTeacher?: boolean } = {}): void {
  if (tasks.has(name)) throw new Error(`task '${name}' is already registered`);
  tasks.set(name, { factory, ...options });
}

export function taskFactory(name: string): TaskFactory | undefined {
  return tasks.get(name)?.factory;
}

/** Whether the task builds its own MAS-OPD teacher when the configuration names none. */
export function taskBuildsTeacher(name: string): boolean {
  return tasks.get(name)?.buildsTeacher === true;
}

export function registeredTasks(): string[] {
  return [...tasks.keys()].sort();
}
