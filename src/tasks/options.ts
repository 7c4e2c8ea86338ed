// Reading a task's `task.options` (a plain object from the configuration file) with errors that
// name the key and the allowed values: "task.options.KEY: got X, expected Y", which the run setup
// turns into a ConfigError. Shared by the tasks of src/tasks (the toy tasks in ./toy/ and the
// workflow task).

export type Options = Record<string, unknown>;

export class TaskOptionError extends Error {
  override name = 'TaskOptionError';
}

export function optionError(key: string, got: unknown, expected: string): TaskOptionError {
  // NaN and ±Infinity (YAML's .nan, .inf) by name: JSON would print them as null.
  const shown = typeof got === 'number' && !Number.isFinite(got) ? String(got) : JSON.stringify(got);
  return new TaskOptionError(`task.options.${key}: got ${shown}, expected ${expected}`);
}

/** Rejects keys not in `known`, naming the task and its keys. */
export function rejectUnknown(options: Options, known: readonly string[], taskName: string, prefix = 'task.options.'): void {
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) throw new TaskOptionError(`${prefix}${k}: unknown option of ${taskName} (known: ${known.join(', ')})`);
  }
}

/**
 * Refuses options that moved to the configuration's `reward` section (the trainer weighs and places
 * rewards, tasks record them raw), in one line naming the new key: `moved` maps each old key to it.
 */
export function refuseMovedRewardOptions(options: Options, moved: Record<string, string>): void {
  for (const [key, now] of Object.entries(moved)) {
    if (options[key] !== undefined) throw new TaskOptionError(`task.options.${key}: moved to the configuration's reward section: set ${now}`);
  }
}

export function oneOfOption<T extends string>(options: Options, key: string, allowed: readonly T[], fallback: T): T {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw optionError(key, v, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
  return v as T;
}

export function intOption(options: Options, key: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw optionError(key, v, max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in ${min}..${max}`);
  }
  return v;
}

export function numberOption(options: Options, key: string, fallback: number, min: number, max = Infinity): number {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw optionError(key, v, max === Infinity ? `a number >= ${min}` : `a number in [${min}, ${max}]`);
  return v;
}

export function boolOption(options: Options, key: string, fallback: boolean): boolean {
  const v = options[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw optionError(key, v, 'true or false');
  return v;
}

export function stringOption(options: Options, key: string): string | undefined {
  const v = options[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw optionError(key, v, 'a non-empty string');
  return v;
}
