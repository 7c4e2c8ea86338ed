// Atomic writes: a file or folder is written under a temporary name that carries the writer's pid,
// then renamed into place (a rename within one file system is atomic). A kill -9 therefore leaves
// either the old content or the new, plus at worst a temporary that src/runs/leftovers.ts removes once
// its writer is dead. Every temporary name contains ".tmp-<pid>" (checkpoint folders:
// ".tmp-step-NNNNNN-<pid>"), which is how leftovers are recognised. A write that fails (a full disk,
// a read-only folder) removes its temporary and leaves the old content; the error is the one line of
// src/runs/write-errors.ts.
import { open, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { trackTemporary } from './temporaries.ts';
import { writing } from './write-errors.ts';

/** The temporary name for `path` written by this process (`suffix` tells apart several at once). */
export function tempPath(path: string, suffix = ''): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}${suffix}`);
}

/** The writer's pid of a temporary name made here or by the engine's own atomic writes; null for other names. */
export function pidOfTemp(name: string): number | null {
  const m = /\.tmp-(?:step-\d+-)?(\d+)/.exec(name);
  return m ? Number(m[1]) : null;
}

/** Writes `data` to `file` atomically and durably (temp file, fsync, rename). */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPath(file);
  const untrack = trackTemporary(tmp);
  try {
    await writing(file, async () => {
      const handle = await open(tmp, 'w');
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, file);
    });
  } catch (err) {
    // Best effort: on a folder turned read-only the temporary cannot go either (the leftover sweep removes it later).
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  } finally {
    untrack();
  }
}
