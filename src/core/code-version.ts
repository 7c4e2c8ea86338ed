// Which code this is: package.json's version and, in a git checkout, the commit and whether tracked
// files differ from it. Written beside what the code builds and later reuses (a task's cached
// pretrained bases), so that a reader can tell a base built by other code: a cache keyed by settings
// alone would hand a base pretrained before a change of the engine's arithmetic to later runs.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface CodeVersion {
  /** package.json's version. */
  version: string;
  /** HEAD's commit; null outside a git checkout (an installed package) or without git. */
  commit: string | null;
  /** Tracked files differ from HEAD; null when there is no commit. */
  dirty: boolean | null;
}

/** The package's root: two folders up from src/core/ and from dist/core/ alike. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    return null;
  }
}

let cached: CodeVersion | undefined;

/** The running code's version (computed once per process). */
export function codeVersion(): CodeVersion {
  if (cached) return cached;
  const commit = existsSync(`${ROOT}.git`) ? git(['rev-parse', 'HEAD']) : null;
  const valid = commit !== null && /^[0-9a-f]{40}$/.test(commit) ? commit : null;
  const status = valid === null ? null : git(['status', '--porcelain', '--untracked-files=no']);
  cached = { version: packageVersion(), commit: valid, dirty: status === null ? null : status !== '' };
  return cached;
}

/** "0.1.0 at 1a2b3c4d5e6f (with uncommitted changes)", for messages. */
export function describeCodeVersion(v: CodeVersion): string {
  if (v.commit === null) return `${v.version} (no git commit known)`;
  return `${v.version} at ${v.commit.slice(0, 12)}${v.dirty ? ' (with uncommitted changes)' : ''}`;
}
