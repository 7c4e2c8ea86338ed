// The imports of the project's own source files, each resolved to the file it names: what the tests of
// the code's layering check (test/engine/engine-boundary.test.ts: the engine's boundary).
//
// Import specifiers are read by TypeScript's own pre-processor (ts.preProcessFile): `import … from`,
// `export … from`, side-effect imports, `import()` and `require()` with a literal, over statements
// that span lines; text in comments and strings that only looks like an import is not one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root: the folder above test/. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

const SOURCE_EXTENSIONS = ['.ts', '.mts', '.mjs', '.js'];

export interface SourceImport {
  /** The importing file, relative to the repository root with '/' separators (src/run/setup.ts). */
  file: string;
  /** The specifier as written ('../engine/index.ts', 'node:fs'). */
  specifier: string;
  /** A relative specifier resolved against `file`'s folder, repository-relative; null for a package ('node:fs', 'yaml'). */
  resolved: string | null;
  /** 1-based line of the specifier in `file`. */
  line: number;
}

/** Every source file under `dir` (repository-relative, '/' separators), sorted; tests (*.test.ts) included. */
export function sourceFiles(dir = 'src'): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(REPO_ROOT, rel)).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const child = posix.join(rel, name);
      if (statSync(join(REPO_ROOT, child)).isDirectory()) walk(child);
      else if (SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith('.d.ts')) out.push(child);
    }
  };
  walk(dir);
  return out;
}

/** The imports of `file` (repository-relative), read from `text` when given, else from the file. */
export function importsOf(file: string, text = readFileSync(join(REPO_ROOT, file), 'utf8')): SourceImport[] {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (pos: number): number => {
    let lo = 0, hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (lineStarts[mid]! <= pos) lo = mid; else hi = mid - 1;
    }
    return lo + 1;
  };
  return ts.preProcessFile(text, true, true).importedFiles.map((ref) => ({
    file,
    specifier: ref.fileName,
    resolved: ref.fileName.startsWith('.') ? posix.normalize(posix.join(posix.dirname(file), ref.fileName)) : null,
    line: lineOf(ref.pos),
  }));
}

/** The imports of every source file under `dir` (default src/), in file order. */
export function sourceImports(dir = 'src'): SourceImport[] {
  return sourceFiles(dir).flatMap((file) => importsOf(file));
}

