// Reading a checkpoint while its run trains. The trainer replaces checkpoints as it goes: it prunes
// the oldest beyond train.keepCheckpoints, moves a step's folder aside to save that step again, and
// moves latest.json on. A reader that opened the folder's files one by one could see some files of
// one checkpoint and then find the rest deleted (an uncaught ENOENT), or a manifest that no longer
// matches (a healthy run called damaged). So a reader takes a snapshot first: every file of the
// checkpoint hard-linked into a private folder beside it. A link is the file itself, and the trainer
// never changes a checkpoint's files in place (it writes new ones and renames folders), so the
// snapshot stays whole whatever the trainer does meanwhile; its manifest is then checked on the
// snapshot, and the reader loads from it. When linking is impossible (another user's run) the files
// are copied to a temporary folder instead, and checked the same way; on a read-only file system
// nothing can replace them and the checkpoint is read where it is.
//
// While a live process trains the run (it holds the run's lock), a snapshot that fails (a file
// vanished while it was linked, the pointer moved on) is a race, never damage: the reader follows
// the pointer again, for up to RACE_LIMIT_MS. Without a writer, the checkpoint is chosen as a resume
// would choose it (a damaged pointer or checkpoint skipped, with a notice), and a checkpoint that is
// damaged and stays so is reported as damaged.
//
//   RUN/checkpoints/.step-000010.read.tmp-<pid>-<n>/   a reader's snapshot (removed by close(); a
//                                                      dead reader's by the next run, as a leftover)
import { copyFile, link, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { checkpointProblem, latestCheckpoint, pointedCheckpoint, readCheckpointState, type CheckpointState } from './checkpoint.ts';
import { filesUnder } from './manifest.ts';
import { DamagedRunError, RunError } from './run-errors.ts';
import { isRunLocked } from './run-lock.ts';
import { trackTemporary } from './temporaries.ts';

export interface CheckpointSnapshot {
  /** The checkpoint's own folder (RUN/checkpoints/step-N), for messages and results. */
  source: string;
  /** Where to read it from: a snapshot that stays whole until close(). */
  dir: string;
  state: CheckpointState;
  /** Removes the snapshot (call it once everything is loaded). */
  close(): Promise<void>;
}

let snapshots = 0;
/** Attempts when no writer is running (a checkpoint that fails them all is damaged). */
const QUIET_ATTEMPTS = 3;
/** How long a reader keeps trying while the trainer replaces checkpoints faster than it can link one. */
const RACE_LIMIT_MS = 30_000;
const pause = (): Promise<void> => new Promise((r) => setTimeout(r, 5 + Math.random() * 20));

/** Whether `err` says a file or folder went away (or was replaced) under the reader. */
const vanished = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

const hasState = async (dir: string): Promise<boolean> => {
  try {
    await lstat(join(dir, 'state.json'));
    return true;
  } catch {
    return false;
  }
};

/** Hard links (or, where linking is refused, copies) of every file of `dir`; null on a read-only file system. */
async function snapshotFiles(dir: string): Promise<{ dir: string; remove: () => Promise<void> } | null> {
  const files = await filesUnder(dir);
  const nearby = join(dirname(dir), `.${basename(dir)}.read.tmp-${process.pid}-${snapshots++}`);
  let target = nearby;
  let copying = false;
  try {
    await mkdir(nearby);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return null; // nothing can replace the checkpoint: read it in place
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    target = await mkdtemp(join(tmpdir(), 'marft-checkpoint-'));
    copying = true;
  }
  const untrack = trackTemporary(target);
  const remove = async (): Promise<void> => {
    await rm(target, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  };
  try {
    for (const sub of new Set(files.map((rel) => dirname(join(target, rel))))) await mkdir(sub, { recursive: true });
    // All at once: the shorter the time between the first link and the last, the less the trainer can prune meanwhile.
    await Promise.all(files.map((rel) => (copying ? copyFile(join(dir, rel), join(target, rel)) : link(join(dir, rel), join(target, rel)))));
  } catch (err) {
    await remove();
    throw err;
  }
  return { dir: target, remove };
}

type Snapshot = Awaited<ReturnType<typeof snapshotFiles>>;

/**
 * A snapshot of `source` checked whole, with its state, or why not; no snapshot (null) on a read-only
 * file system. Errors name the checkpoint, not the snapshot the user never asked for.
 */
async function checkedSnapshot(source: string): Promise<{ snap: Snapshot; problem: string | null; state?: CheckpointState }> {
  const snap = await snapshotFiles(source);
  const dir = snap?.dir ?? source;
  try {
    const problem = await checkpointProblem(dir);
    if (problem !== null) {
      await snap?.remove();
      return { snap, problem };
    }
    return { snap, problem, state: await readCheckpointState(dir) };
  } catch (err) {
    await snap?.remove();
    if (err instanceof RunError && snap) err.message = err.message.split(snap.dir).join(source);
    throw err;
  }
}

const RETRY = Symbol('retry');

/**
 * A checkpoint to read, whole: `target` is a checkpoint folder (RUN/checkpoints/step-N) or a run
 * folder (the checkpoint its latest.json names; without a writer, and when that is missing or
 * damaged, its newest intact checkpoint, as a resume would choose, src/runs/checkpoint.ts). Null when
 * `target` is a run folder without checkpoints. Throws DamagedRunError for a checkpoint that is
 * damaged and stays so.
 */
export async function openCheckpoint(target: string, notice: Notice = stderrNotice): Promise<CheckpointSnapshot | null> {
  const direct = await hasState(target);
  const runDir = direct ? dirname(dirname(target)) : target;
  const deadline = Date.now() + RACE_LIMIT_MS;
  for (let attempt = 1; ; attempt++) {
    const live = isRunLocked(runDir);
    const expired = Date.now() >= deadline;
    const last = expired || ((direct || !live) && attempt >= QUIET_ATTEMPTS);
    try {
      let source: string | null | typeof RETRY;
      if (direct) source = target;
      else if (live && !last) {
        // Where the pointer says: the trainer replaces it atomically, so it names a whole checkpoint
        // (or none yet, or one it has pruned since: then a newer one is named).
        source = await pointedCheckpoint(runDir);
        if (source === null) source = (await hasStepFolders(runDir)) ? RETRY : null;
      } else source = await latestCheckpoint(runDir, notice);
      if (source === null) return null;
      if (source !== RETRY) {
        const { snap, problem, state } = await checkedSnapshot(source);
        if (state) return { source, dir: snap?.dir ?? source, state, close: async () => snap?.remove() };
        if (last || snap === null || (!live && direct)) throw new DamagedRunError(`checkpoint ${source} is damaged: ${problem}`);
      }
    } catch (err) {
      if (live && expired) throw new RunError(`${runDir}: its checkpoints were replaced faster than they could be read for ${RACE_LIMIT_MS / 1000} s (a checkpoint every few steps and train.keepCheckpoints: 1?); read again, or keep more checkpoints`);
      if (last || !(vanished(err) || (live && err instanceof DamagedRunError && !direct))) throw err;
      if (direct && vanished(err) && !(await hasState(target))) {
        throw new DamagedRunError(`checkpoint ${target} was removed while it was being read (the run keeps only its last train.keepCheckpoints checkpoints); read the run folder ${runDir} for its newest one`);
      }
    }
    await pause();
  }
}

async function hasStepFolders(runDir: string): Promise<boolean> {
  try {
    return (await readdir(join(runDir, 'checkpoints'))).some((d) => /^step-\d+$/.test(d));
  } catch {
    return false;
  }
}
