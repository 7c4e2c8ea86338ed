// A folder's manifest: the size and SHA-256 of every file in it, written last. A folder whose
// manifest is missing, unreadable or does not match its files is not intact: it was cut short, or
// edited or damaged afterwards. Checkpoints and the run's saved base model carry one.
//
//   manifest.json  { "format": "marft-manifest", "version": 1, "files": { "state.json": { "size": 123, "sha256": "…" }, … } }
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';
import { formatFields, formatVersion } from './format-version.ts';

export const MANIFEST = 'manifest.json';

interface FileEntry {
  size: number;
  sha256: string;
}

interface Manifest {
  format: 'marft-manifest';
  version: number;
  files: Record<string, FileEntry>;
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Uint8Array);
  return hash.digest('hex');
}

/** Paths (relative, with '/') of the regular files under `dir`, recursively; links are not followed. */
export async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(dir, rel)));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}

/** Writes `dir`/manifest.json over every file now in `dir`; call it once the folder is otherwise complete. */
export async function writeManifest(dir: string): Promise<void> {
  const files: Record<string, FileEntry> = {};
  for (const rel of (await filesUnder(dir)).filter((f) => f !== MANIFEST)) {
    const full = join(dir, rel);
    files[rel] = { size: (await stat(full)).size, sha256: await sha256(full) };
  }
  const manifest: Manifest = { ...formatFields('marft-manifest'), format: 'marft-manifest', files };
  await writeFileAtomic(join(dir, MANIFEST), JSON.stringify(manifest, null, 1));
}

/**
 * Null when `dir` is intact; otherwise why not, in a few words ("adapters/x/a.safetensors: 40 bytes,
 * the manifest says 96"). Throws FormatVersionError for a manifest of a newer marft.
 */
export async function manifestProblem(dir: string): Promise<string | null> {
  const file = join(dir, MANIFEST);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'no manifest.json (its write did not finish)' : `manifest.json cannot be read (${code ?? (err as Error).message})`;
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    return 'manifest.json is not valid JSON';
  }
  if (manifest?.format !== 'marft-manifest' || typeof manifest.files !== 'object' || manifest.files === null) return 'manifest.json is not a marft manifest';
  // A newer manifest is refused (FormatVersionError), never taken for damage: the folder would be skipped or rebuilt.
  if (formatVersion(file, 'marft-manifest', manifest) === null) return 'manifest.json has no valid version';
  for (const [rel, entry] of Object.entries(manifest.files)) {
    // Entries come from a file on disk: never follow one out of the folder.
    if (rel.startsWith('/') || rel.split('/').includes('..')) return `manifest.json names ${JSON.stringify(rel)}, outside the folder`;
    const problem = await fileProblem(join(dir, rel), rel, entry);
    if (problem) return problem;
  }
  return null;
}

/** Why the file at `full` does not match its manifest entry, or null; a file removed meanwhile is missing. */
async function fileProblem(full: string, rel: string, entry: FileEntry): Promise<string | null> {
  try {
    const size = (await stat(full)).size;
    if (size !== entry.size) return `${rel}: ${size} bytes, the manifest says ${entry.size}`;
    if ((await sha256(full)) !== entry.sha256) return `${rel}: its checksum does not match the manifest`;
    return null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return `${rel} is missing`;
    throw err;
  }
}
