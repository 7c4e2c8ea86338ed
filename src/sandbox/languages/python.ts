// Python programs: the source becomes main.py, run by a system interpreter that the sandbox's
// unprivileged uid can execute (a pyenv or venv under /root would not be reachable by it).
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { LanguageRunner } from '../types.ts';

let interpreter: string | null = null;

/** MARFT_SANDBOX_PYTHON, else the first python3 of /usr/bin, /usr/local/bin, then PATH. */
export function pythonInterpreter(): string {
  if (interpreter) return interpreter;
  const candidates = [process.env.MARFT_SANDBOX_PYTHON, '/usr/bin/python3', '/usr/local/bin/python3', ...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'python3'))];
  for (const c of candidates) {
    if (!c || !existsSync(c)) continue;
    try {
      accessSync(c, constants.X_OK);
      interpreter = realpathSync(c);
      return interpreter;
    } catch {
      // not executable: try the next one
    }
  }
  throw new Error('marft sandbox: no python3 interpreter found (set MARFT_SANDBOX_PYTHON to its absolute path)');
}

// -E: ignore PYTHON* variables; -s: no user site-packages; -B: write no .pyc files.
export const PYTHON_FLAGS = ['-E', '-s', '-B'];

export const python: LanguageRunner = {
  language: 'python',
  prepare(source: string) {
    return { files: { 'main.py': source }, argv: [pythonInterpreter(), ...PYTHON_FLAGS, 'main.py'] };
  },
};
