// What makes a folder a run folder: RUN/marft-run.json ({ format: "marft-run", version, createdAt }),
// written when a run starts in it. A folder that exists and holds something else (a model folder, a
// project's root) is refused as a run directory before anything is written into it: a run would
// otherwise replace its config.json and add metrics and checkpoints among its files. An empty folder
// becomes a run. Runs made before the mark existed are recognised by what they hold (metrics.jsonl,
// checkpoints/, or a config.json of this project's shape) and get the mark on their next start.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pidOfTemp, writeFileAtomic } from './atomic-write.ts';
import { formatFields, formatVersion } from './format-version.ts';
import { LOCK_FILE } from './run-lock.ts';
import { RunError } from './run-errors.ts';

export const RUN_MARK = 'marft-run.json';

/** A folder given as a run folder that holds something else. */
export class NotARunFolderError extends RunError {
  override name = 'NotARunFolderError';
}

export type FolderKind = 'absent' | 'empty' | 'run' | 'other';

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A config.json written by marft train (the resolved configuration): it has a task and a model section. */
const isRunConfig = (v: unknown): boolean => isObject(v) && isObject(v.task) && isObject(v.model);

/**
 * What `dir` is. The run's own bookkeeping (its lock, temporaries of interrupted writes) does not make
 * a folder non-empty. Throws FormatVersionError for a run folder of a newer marft.
 */
export async function folderKind(dir: string): Promise<FolderKind> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  const content = entries.filter((e) => e !== LOCK_FILE && pidOfTemp(e) === null);
  if (content.length === 0) return 'empty';
  if (content.includes(RUN_MARK)) {
    const file = join(dir, RUN_MARK);
    const mark = await readJson(file);
    if ((mark as { format?: unknown } | undefined)?.format === 'marft-run') formatVersion(file, 'marft-run', mark);
    return 'run';
  }
  if (content.includes('metrics.jsonl') || content.includes('checkpoints')) return 'run';
  if (content.includes('config.json') && isRunConfig(await readJson(join(dir, 'config.json')))) return 'run';
  return 'other';
}

/** Refuses `dir` (named `given` to the user) as a run folder when it exists and holds something else. */
export async function assertRunFolder(dir: string, given: string): Promise<void> {
  if ((await folderKind(dir)) !== 'other') return;
  const entries = (await readdir(dir)).filter((e) => e !== LOCK_FILE && pidOfTemp(e) === null).sort();
  const shown = entries.slice(0, 4).join(', ') + (entries.length > 4 ? `, and ${entries.length - 4} more` : '');
  throw new NotARunFolderError(`${given} is not a marft run folder: it already holds ${shown}; choose a new or empty folder (a run writes config.json, metrics.jsonl and checkpoints/ into it)`);
}

/**
 * Marks `dir` as a run folder (once: an existing mark is kept, so createdAt stays the first start's).
 * Throws FormatVersionError when the mark is a newer marft's.
 */
export async function markRunFolder(dir: string): Promise<void> {
  const file = join(dir, RUN_MARK);
  const mark = await readJson(file);
  if ((mark as { format?: unknown } | undefined)?.format === 'marft-run') {
    formatVersion(file, 'marft-run', mark);
    return;
  }
  await writeFileAtomic(file, `${JSON.stringify({ ...formatFields('marft-run'), createdAt: new Date().toISOString() })}\n`);
}
