// A model folder written as a whole: a base a task built (RUN/base, a task's cache of pretrained
// bases) goes to a temporary folder with a manifest and is renamed into place, so a reader finds
// either no folder or a complete one; a folder whose manifest does not match is a damaged write.
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Engine } from '../engine/types.ts';
import { tempPath } from './atomic-write.ts';
import { manifestProblem, writeManifest } from './manifest.ts';

/** Writes the engine's base to `dir` (absent) as a whole: temporary folder, manifest, rename. */
export async function saveBaseAtomic(engine: Engine, dir: string): Promise<void> {
  const tmp = tempPath(dir);
  await rm(tmp, { recursive: true, force: true });
  try {
    await engine.saveBase(tmp);
    await writeManifest(tmp);
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    // Another process saved the same base first (it is built from the same seed): keep theirs.
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await manifestProblem(dir)) === null) return;
    throw err;
  }
}

/**
 * What `dir` holds before a base is opened from it or written to it: 'intact' (a whole base, to
 * open), 'absent', or why it is damaged (an interrupted write): a damaged folder is removed here,
 * so the caller rebuilds the base and saves it with saveBaseAtomic.
 */
export async function claimSavedBase(dir: string): Promise<'intact' | 'absent' | { damaged: string }> {
  if (!existsSync(dir)) return 'absent';
  const problem = await manifestProblem(dir);
  if (problem === null) return 'intact';
  await rm(dir, { recursive: true, force: true });
  return { damaged: problem };
}
