// One writer per run folder: RUN/.lock, held by train() for the whole run. The lock file is written
// complete under a temporary name and hard-linked into place (link fails if the name exists, so
// exactly one process creates it, and nobody ever reads a half-written lock). It records the
// holder's pid, host and start time, and (Linux) the holder's start in clock ticks and the machine's
// boot id, so that a process id reused by another process after the holder died, or a reboot, is not
// taken for the holder (./process-alive.ts). A second process gets a one-line error naming the holder
// and how to recover; a lock whose holder is no longer running (kill -9, a crash) is taken over with
// a notice.
import { hostname } from 'node:os';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { link, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Notice } from '../core/notice.ts';
import { bootId, isProcessAlive, processStartTime } from './process-alive.ts';
import { RunLockedError } from './run-errors.ts';
import { writing } from './write-errors.ts';

export const LOCK_FILE = '.lock';

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
  /** The holder's start time in clock ticks since boot (/proc/PID/stat); absent off Linux and in older locks. */
  pidStart?: string;
  /** The machine's boot id when the lock was taken; absent off Linux and in older locks. */
  boot?: string;
}

/** Lock files this process holds right now: tells our own live lock from a dead process that had our pid. */
const heldHere = new Set<string>();

export interface RunLock {
  readonly file: string;
  /** Removes the lock if it is still ours. */
  release(): Promise<void>;
  /** The same, synchronously: for a process that exits at once (a second Ctrl-C, src/runs/stop-signal.ts). */
  releaseSync(): void;
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

type Holder = 'alive' | 'dead' | 'reused' | 'rebooted';

/** Whether the lock's holder may still be writing: a live process on this host (not a dead one that had our pid or its pid). */
function holderState(info: LockInfo, file: string): Holder {
  if (info.host !== hostname()) return 'alive'; // another machine's pid cannot be checked from here
  const boot = bootId();
  if (info.boot && boot && info.boot !== boot) return 'rebooted';
  if (info.pid === process.pid) return heldHere.has(file) ? 'alive' : 'dead';
  if (!isProcessAlive(info.pid)) return 'dead';
  if (info.pidStart) {
    const start = processStartTime(info.pid);
    if (start !== null && start !== info.pidStart) return 'reused';
  }
  return 'alive';
}

const gone: Record<Exclude<Holder, 'alive'>, string> = {
  dead: 'which is no longer running',
  reused: 'which is no longer running (its process id now belongs to another process)',
  rebooted: 'which ran before this machine restarted',
};

/** The refusal for a lock held by a live process: who holds it and how to recover. */
function lockedMessage(runDir: string, file: string, info: LockInfo): string {
  const { pid, host, startedAt } = info;
  if (host !== hostname()) {
    return `${runDir} is being trained by process ${pid} on host ${host} (since ${startedAt}); if that process is gone, delete ${file} and start again. Two writers would interleave its metrics and checkpoints`;
  }
  // Without a recorded start time (an older lock, or no /proc) a reused process id cannot be told apart.
  const unsure = info.pidStart && processStartTime(pid) !== null ? '' : `; if process ${pid} is not a marft run (its id may have been reused), delete ${file} and start again`;
  return `${runDir} is being trained by process ${pid} (since ${startedAt}); wait for it to finish, or stop it with kill -INT ${pid} (it saves a checkpoint and releases the lock) and resume${unsure}. Two writers would interleave its metrics and checkpoints`;
}

export async function acquireRunLock(runDir: string, notice: Notice): Promise<RunLock> {
  const file = join(runDir, LOCK_FILE);
  const pidStart = processStartTime(process.pid);
  const boot = bootId();
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ...(pidStart ? { pidStart } : {}), ...(boot ? { boot } : {}) };
  const text = JSON.stringify(mine);
  const tmp = join(runDir, `${LOCK_FILE}.tmp-${process.pid}`);
  // A folder that cannot hold the lock (read-only, full) is the one line of ./write-errors.ts.
  await writing(file, () => writeFile(tmp, text));
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writing(file, () => link(tmp, file));
        heldHere.add(file);
        return { file, release: () => releaseLock(file, text), releaseSync: () => releaseLockSync(file, text) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readLock(file);
      if (!held) continue; // released in between: try again
      const state = held.info ? holderState(held.info, file) : 'dead';
      if (held.info && state === 'alive') throw new RunLockedError(lockedMessage(runDir, file, held.info));
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
      const who = held.info ? `process ${held.info.pid} (since ${held.info.startedAt}), ${gone[state as Exclude<Holder, 'alive'>]}` : 'an unreadable lock file';
      notice(`${runDir} was locked by ${who}; taking the lock over`);
    }
    throw new RunLockedError(`${runDir}: could not take the run's lock (${file}) after 3 attempts; another process keeps taking it`);
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

async function releaseLock(file: string, text: string): Promise<void> {
  heldHere.delete(file);
  if (!existsSync(file)) return;
  try {
    const held = await readLock(file);
    if (held?.text === text) await rm(file, { force: true });
  } catch {
    // A folder turned read-only keeps the lock: this process is ending, so the next run takes it over
    // as a dead holder's. Failing here would hide the error that ended the run.
  }
}

function releaseLockSync(file: string, text: string): void {
  heldHere.delete(file);
  try {
    if (readFileSync(file, 'utf8') === text) rmSync(file, { force: true });
  } catch {
    // Gone already, or a folder turned read-only: the next run takes a dead holder's lock over.
  }
}

/** Whether a live process holds `runDir`'s lock now (a reader's question: may the run's checkpoints be changing?). */
export function isRunLocked(runDir: string): boolean {
  const file = join(runDir, LOCK_FILE);
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as LockInfo;
    return typeof info?.pid === 'number' && holderState(info, file) === 'alive';
  } catch {
    return false;
  }
}
