// Removing what interrupted writes left behind: temporaries (names with ".tmp-<pid>", see
// src/runs/atomic-write.ts) whose writer is no longer running. Run at the start of a run or resume;
// without it `.tmp-step-*` checkpoint folders and `.model.safetensors.tmp-*` files stay forever.
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pidOfTemp } from './atomic-write.ts';
import type { Notice } from '../core/notice.ts';
import { isProcessAlive } from './process-alive.ts';

/**
 * Removes the leftovers directly inside `dir` and returns their names. `ownToo`: also those named with
 * this process's pid (safe when the caller holds the run's lock, so nothing of ours is writing there).
 */
export async function removeLeftovers(dir: string, notice: Notice, options: { ownToo?: boolean } = {}): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    const pid = pidOfTemp(name);
    if (pid === null) continue;
    const ours = pid === process.pid;
    if (ours ? !options.ownToo : isProcessAlive(pid)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  if (removed.length > 0) notice(`removed ${removed.length} leftover(s) of interrupted writes in ${dir}: ${removed.join(', ')}`);
  return removed;
}
