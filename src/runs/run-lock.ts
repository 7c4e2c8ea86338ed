// One writer per run folder: RUN/.lock, held by train() for the whole run. The lock file is written
// complete under a temporary name and hard-linked into place (link fails if the name exists, so
// exactly one process creates it, and nobody ever reads a half-written lock). It records the
// holder's pid, host and start time. A second process gets a one-line error naming the holder; a
// lock whose holder is no longer running (kill -9, a crash) is taken over with a notice.
import { hostname } from 'node:os';
import { existsSync } from 'node:fs';
import { link, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Notice } from '../core/notice.ts';
import { isProcessAlive } from './process-alive.ts';
import { RunLockedError } from './run-errors.ts';

export const LOCK_FILE = '.lock';

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

/** Lock files this process holds right now: tells our own live lock from a dead process that had our pid. */
const heldHere = new Set<string>();

export interface RunLock {
  readonly file: string;
  /** Removes the lock if it is still ours. */
  release(): Promise<void>;
}

async function readLock(file: string): Promise<{ text: string; info: LockInfo | null } | null> {
  try {
    const text = await readFile(file, 'utf8');
    try {
      const info = JSON.parse(text) as LockInfo;
      return { text, info: typeof info?.pid === 'number' ? info : null };
    } catch {
      return { text, info: null };
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Whether the lock's holder may still be writing: a live process on this host (not a dead one that had our pid). */
function holderAlive(info: LockInfo, file: string): boolean {
  if (info.host !== hostname()) return true; // another machine's pid cannot be checked from here
  if (info.pid === process.pid) return heldHere.has(file);
  return isProcessAlive(info.pid);
}

export async function acquireRunLock(runDir: string, notice: Notice): Promise<RunLock> {
  const file = join(runDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  const text = JSON.stringify(mine);
  const tmp = join(runDir, `${LOCK_FILE}.tmp-${process.pid}`);
  await writeFile(tmp, text);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(tmp, file);
        heldHere.add(file);
        return { file, release: () => releaseLock(file, text) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readLock(file);
      if (!held) continue; // released in between: try again
      if (held.info && holderAlive(held.info, file)) {
        const { pid, host, startedAt } = held.info;
        const where = host === hostname() ? '' : ` on host ${host}`;
        const hint = host === hostname() ? 'wait for it to finish or stop it' : `if that process is gone, delete ${file}`;
        throw new RunLockedError(`${runDir} is being trained by process ${pid}${where} (since ${startedAt}); ${hint}. Two writers would interleave its metrics and checkpoints`);
      }
      // A dead holder, or a lock file that is not ours to parse: move exactly that file aside, so two
      // processes taking over at once cannot both remove a lock one of them has just created.
      const aside = join(runDir, `${LOCK_FILE}.stale.tmp-${process.pid}`);
      try {
        await rename(file, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      const moved = await readFile(aside, 'utf8');
      if (moved !== held.text) {
        // Someone took it over between our read and our rename: put their live lock back.
        await link(aside, file).catch(() => undefined);
        await rm(aside, { force: true });
        continue;
      }
      await rm(aside, { force: true });
      const who = held.info ? `process ${held.info.pid} (since ${held.info.startedAt})` : 'an unreadable lock file';
      notice(`${runDir} was locked by ${who}, which is no longer running; taking the lock over`);
    }
    throw new RunLockedError(`${runDir}: could not take the run's lock (${file}) after 3 attempts; another process keeps taking it`);
  } finally {
    await rm(tmp, { force: true });
  }
}

async function releaseLock(file: string, text: string): Promise<void> {
  heldHere.delete(file);
  if (!existsSync(file)) return;
  const held = await readLock(file);
  if (held?.text === text) await rm(file, { force: true });
}
