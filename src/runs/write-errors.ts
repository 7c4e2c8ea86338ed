// A write that fails for a reason outside the program (a full disk, a read-only file system, a folder
// this user may not write) is reported as one line naming the path, the reason and what to do, never
// as a stack trace. Every writer of a run folder or an experiment's output goes through `writing`
// (checkpoints, metrics, pointers, configuration, results; later samples and trackers), so each of
// them reports these the same way. The caller keeps what it already wrote: every file is replaced
// atomically (./atomic-write.ts), so a failed write leaves the previous version whole.
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { RunError } from './run-errors.ts';

/** A write refused by the file system; `code` is the errno name (ENOSPC, EROFS, …). */
export class WriteFailedError extends RunError {
  override name = 'WriteFailedError';
  constructor(readonly path: string, readonly code: string, message: string) {
    super(message);
  }
}

const REASONS: Record<string, { why: string; fix: string }> = {
  ENOSPC: { why: 'no space is left on its file system', fix: 'free space there, or move the folder to a larger disk' },
  EDQUOT: { why: "this user's disk quota is used up", fix: 'free space within the quota, or move the folder' },
  EFBIG: { why: 'the file would exceed the largest file its file system allows', fix: 'move the folder to another file system' },
  EROFS: { why: 'its file system is read-only', fix: 'remount it read-write, or move the folder to a writable disk' },
  EACCES: { why: 'permission denied', fix: 'make it writable for this user, or run as its owner' },
  EPERM: { why: 'the operation is not permitted', fix: 'make it writable for this user, or run as its owner' },
};

/**
 * Engines that write through another process (the torch worker's Python, safetensors' Rust) report
 * errno as text: "[Errno 28] No space left on device", "Read-only file system (os error 30)".
 */
const TEXT_CODES: [RegExp, string][] = [
  [/No space left on device|\[Errno 28\]|os error 28\b/, 'ENOSPC'],
  [/Disk quota exceeded|\[Errno 122\]|os error 122\b/, 'EDQUOT'],
  [/File too large|\[Errno 27\]|os error 27\b/, 'EFBIG'],
  [/Read-only file system|\[Errno 30\]|os error 30\b/, 'EROFS'],
  [/Permission denied|\[Errno 13\]|os error 13\b/, 'EACCES'],
];

/** The errno name of a write failure this file translates, or null (any other error stays what it is). */
export function writeErrorCode(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && code in REASONS) return code;
  const message = err instanceof Error ? err.message : '';
  for (const [pattern, name] of TEXT_CODES) if (pattern.test(message)) return name;
  return null;
}

/** `err` as the one-line WriteFailedError for `path`, or null when it is not a full disk or a refused write. */
export function asWriteFailure(err: unknown, path: string): WriteFailedError | null {
  if (err instanceof WriteFailedError) return err;
  const code = writeErrorCode(err);
  if (!code) return null;
  const { why, fix } = REASONS[code]!;
  return new WriteFailedError(path, code, `cannot write ${path}: ${why} (${code}); ${fix}`);
}

/**
 * Node's recursive mkdir reports a folder it cannot create on a read-only file system as ENOENT;
 * the nearest folder that exists says why (EROFS, EACCES).
 */
function mkdirCause(err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (e?.code !== 'ENOENT' || e.syscall !== 'mkdir' || !e.path) return err;
  let dir = dirname(e.path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return err;
  } catch (cause) {
    return cause;
  }
}

/** Runs a write into `path` (a file or a folder being filled); a full disk or a refused write becomes its WriteFailedError. */
export async function writing<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw asWriteFailure(mkdirCause(err), path) ?? err;
  }
}
