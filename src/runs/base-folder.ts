// A model folder written as a whole: a base a task built (RUN/base, a task's cache of pretrained
// bases) goes to a temporary folder with a manifest and is renamed into place, so a reader finds
// either no folder or a complete one; a folder whose manifest does not match is a damaged write.
// Beside the weights, built-by.json records the code that built them (src/core/code-version.ts): a
// cache's name covers the settings that shape a base, not the engine's arithmetic, so a base reused
// from an older checkout says so (builtByNote) instead of passing silently for this code's.
//
//   built-by.json  { "format": "marft-built-by", "version": 1, "createdAt": "…", "code": { "version": "0.1.0", "commit": "…" | null, "dirty": false | null } }
import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CodeVersion, codeVersion, describeCodeVersion } from '../core/code-version.ts';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { loadEngine } from '../engine/index.ts';
import type { Engine } from '../engine/types.ts';
import { tempPath } from './atomic-write.ts';
import { FormatVersionError, formatFields, formatVersion } from './format-version.ts';
import { manifestProblem, writeManifest } from './manifest.ts';

export const BUILT_BY = 'built-by.json';

/** Writes the engine's base to `dir` (absent) as a whole: temporary folder, manifest, rename. */
export async function saveBaseAtomic(engine: Engine, dir: string): Promise<void> {
  const tmp = tempPath(dir);
  await rm(tmp, { recursive: true, force: true });
  try {
    await engine.saveBase(tmp);
    await writeFile(join(tmp, BUILT_BY), `${JSON.stringify({ ...formatFields('marft-built-by'), createdAt: new Date().toISOString(), code: codeVersion() }, null, 2)}\n`);
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

/** The code that built the base in `dir`: null when the folder records none (saved before bases did) or it is unreadable. */
export async function builtBy(dir: string): Promise<CodeVersion | null> {
  let parsed: { code?: CodeVersion };
  try {
    parsed = JSON.parse(await readFile(join(dir, BUILT_BY), 'utf8')) as { code?: CodeVersion };
  } catch {
    return null;
  }
  // A newer format throws FormatVersionError (its message says so); an older one has the same fields.
  formatVersion(join(dir, BUILT_BY), 'marft-built-by', parsed);
  return parsed.code && typeof parsed.code.version === 'string' ? parsed.code : null;
}

/**
 * A one-line note when the base in `dir` was built by other code than `current` (another commit, or
 * no record of one): its weights are what that code computed, and a rebuild here may differ where the
 * engine's arithmetic changed since. Null when both name the same commit.
 */
export async function builtByNote(dir: string, current: CodeVersion = codeVersion()): Promise<string | null> {
  let stored: CodeVersion | null;
  try {
    stored = await builtBy(dir);
  } catch (err) {
    // The record is informational: a newer one is reported, and the base is still used.
    if (err instanceof FormatVersionError) return err.message.replace(/\. Nothing was changed$/, '');
    throw err;
  }
  const rebuild = 'delete the folder to pretrain it with this code';
  if (stored === null) return `the cached base ${dir} records no code version (saved before bases recorded one); it is reused as it is (${rebuild})`;
  if (stored.commit !== null && stored.commit === current.commit) return null;
  return `the cached base ${dir} was built by marft ${describeCodeVersion(stored)}; this is ${describeCodeVersion(current)}; it is reused as it is (${rebuild})`;
}

const noted = new Set<string>();

/**
 * A task's cached base: the intact copy in `dir`, loaded (with builtByNote's note, once per folder and
 * process), or else `build()`'s model, saved there as a whole. A damaged copy (its manifest does not
 * match) is removed and replaced by the one built here.
 */
export async function cachedBase(dir: string, build: () => Promise<Engine>, notice: Notice = stderrNotice): Promise<Engine> {
  if ((await claimSavedBase(dir)) === 'intact') {
    if (!noted.has(dir)) {
      noted.add(dir);
      const note = await builtByNote(dir);
      if (note) notice(note);
    }
    return loadEngine(dir);
  }
  const built = await build();
  await saveBaseAtomic(built, dir);
  return built;
}
