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
// A snapshot that fails its check while the run may be changing (the checkpoint vanished, or the
// pointer moved on) is retried on the run's then newest checkpoint; only a checkpoint that is damaged
// and stays so is reported as damaged.
//
//   RUN/checkpoints/.step-000010.read.tmp-<pid>-<n>/   a reader's snapshot (removed by close(); a
//                                                      dead reader's by the next run, as a leftover)
import { copyFile, link, lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { checkpointProblem, latestCheckpoint, readCheckpointState, type CheckpointState } from './checkpoint.ts';
import { filesUnder } from './manifest.ts';
import { DamagedRunError } from './run-errors.ts';
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
const ATTEMPTS = 6;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether `err` says a file or folder went away (or was replaced) under the reader. */
const vanished = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

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
    for (const rel of files) {
      await mkdir(dirname(join(target, rel)), { recursive: true });
      if (copying) await copyFile(join(dir, rel), join(target, rel));
      else await link(join(dir, rel), join(target, rel));
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return { dir: target, remove };
}

/**
 * A checkpoint to read, whole: `target` is a checkpoint folder (RUN/checkpoints/step-N) or a run
 * folder (its latest intact checkpoint, src/runs/checkpoint.ts). Null when `target` is a run folder
 * without checkpoints. Throws DamagedRunError for a checkpoint that is damaged and stays so.
 */
export async function openCheckpoint(target: string, notice: Notice = stderrNotice): Promise<CheckpointSnapshot | null> {
  const isCheckpoint = async (): Promise<boolean> => {
    try {
      await lstat(join(target, 'state.json'));
      return true;
    } catch {
      return false;
    }
  };
  const direct = await isCheckpoint();
  for (let attempt = 1; ; attempt++) {
    const last = attempt === ATTEMPTS;
    // Notices of attempts that a race spoiled are not shown: only those of the one that is used.
    const heard: string[] = [];
    try {
      const source = direct ? target : await latestCheckpoint(target, (m) => heard.push(m));
      if (source === null) return null;
      const snap = await snapshotFiles(source);
      const dir = snap?.dir ?? source;
      const problem = await checkpointProblem(dir);
      if (problem === null) {
        const state = await readCheckpointState(dir);
        heard.forEach((m) => notice(m));
        return { source, dir, state, close: async () => snap?.remove() };
      }
      await snap?.remove();
      if (last || snap === null) throw new DamagedRunError(`checkpoint ${source} is damaged: ${problem}`);
    } catch (err) {
      // A race with the trainer: the folder went while being linked, or every checkpoint the scan
      // listed was pruned before it was checked. The next attempt starts from the pointer again.
      if (last || !(vanished(err) || (err instanceof DamagedRunError && !direct))) throw err;
      if (direct && vanished(err) && !(await isCheckpoint())) {
        throw new DamagedRunError(`checkpoint ${target} was removed while it was being read (the run keeps only its last train.keepCheckpoints checkpoints); read the run folder ${dirname(dirname(target))} for its newest one`);
      }
    }
    await pause(20 * attempt);
  }
}
