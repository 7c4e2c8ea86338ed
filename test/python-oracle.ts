// Running the Python test oracles (transformers, PEFT, torch, safetensors) in the virtual
// environment that scripts/setup.sh builds (.venv-oracle), whatever the working directory.
// Shared by the oracle tests of the engine (src/engine/embedded/*.test.ts, test/engine/) and the
// tokenizer (test/tokenizer/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const oraclePython = join(repoRoot, '.venv-oracle/bin/python');

/** A skip reason when the oracle venv is missing (CI always has it: scripts/setup.sh makes it). */
export const skipWithoutVenv: string | false = existsSync(oraclePython) ? false : `no ${oraclePython}: run scripts/setup.sh to build the oracle venv`;

/**
 * Runs the venv's Python with `args` (a script path or `-c CODE`, then its arguments) from the
 * repository root, `stdin` fed to it; fails the test with Python's stderr unless it exits 0.
 * Returns its stdout.
 */
export function runPython(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(oraclePython, args, { cwd: repoRoot, encoding: 'utf8', input: opts.stdin, env: opts.env ?? process.env });
  assert.equal(r.status, 0, r.stderr || r.error?.message);
  return r.stdout;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `marft-${prefix}-`));
}

/** Runs `fn` in a fresh temporary folder, removed afterwards. */
export function withTempDir(prefix: string, fn: (dir: string) => void): void {
  const dir = tempDir(prefix);
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
