// The temporaries this process is writing right now (a file or a checkpoint folder before its rename
// into place, ./atomic-write.ts), so that a process stopped at once (a second Ctrl-C,
// ./stop-signal.ts) removes them on its way out instead of leaving them for the next run's
// leftover sweep (./leftovers.ts). Removal is synchronous: it runs in an exit path.
import { rmSync } from 'node:fs';

const live = new Set<string>();

/** Records `path` as being written; the returned function forgets it (after its rename, or its removal). */
export function trackTemporary(path: string): () => void {
  live.add(path);
  return () => void live.delete(path);
}

/** Removes every temporary still being written (best effort: the process is exiting). */
export function removeTemporariesSync(): void {
  for (const path of live) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // A read-only or vanished folder: the next run's leftover sweep removes what remains.
    }
  }
  live.clear();
}
