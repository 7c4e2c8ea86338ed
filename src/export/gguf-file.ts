// GGUF (llama.cpp's model format) of an exported Hugging Face folder, through the repository's
// scripts/hf-to-gguf.py: float32, Qwen3 with marft's character tokenizer (what the tiny models are) or
// Llama with a byte-level BPE vocabulary (SmolLM2); the script refuses anything else in one line. It
// needs a Python with numpy and the gguf package: .venv-llamacpp (bash scripts/setup.sh --llamacpp),
// MARFT_GGUF_PYTHON, or the --python flag.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const GGUF_SCRIPT = join(repoRoot, 'scripts/hf-to-gguf.py');

/**
 * MARFT_GGUF_PYTHON, else the first of .venv-llamacpp (bash scripts/setup.sh --llamacpp) and
 * .venv-models (--models or --smollm2) that exists: both carry the gguf package.
 */
export function defaultGgufPython(): string {
  if (process.env.MARFT_GGUF_PYTHON) return process.env.MARFT_GGUF_PYTHON;
  const candidates = ['.venv-llamacpp/bin/python', '.venv-models/bin/python'].map((p) => join(repoRoot, p));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** Why `python` cannot write GGUF files (missing, or without the gguf package), or null when it can. */
export function ggufPythonProblem(python: string): string | null {
  const setup = 'bash scripts/setup.sh --models makes .venv-models with it, as --llamacpp makes .venv-llamacpp (or name an interpreter with --python or MARFT_GGUF_PYTHON)';
  if (!existsSync(python)) return `${python} does not exist: writing GGUF needs a Python with the gguf package; ${setup}`;
  const probe = spawnSync(python, ['-c', 'import gguf, numpy'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${python} cannot import gguf and numpy (${(probe.stderr || probe.error?.message || '').trim().split('\n').at(-1)}); ${setup}`;
  return null;
}

/** Converts the Hugging Face folder `hfDir` into `outFile` (written beside it and renamed into place). */
export function writeGguf(hfDir: string, outFile: string, python: string): void {
  const tmp = join(dirname(outFile), `.${basename(outFile)}.tmp-${process.pid}`);
  const run = spawnSync(python, [GGUF_SCRIPT, hfDir, tmp], { encoding: 'utf8' });
  if (run.status !== 0) {
    rmSync(tmp, { force: true });
    const line = (run.stderr || run.error?.message || `exit code ${run.status}`).trim().split('\n').at(-1);
    throw new Error(`GGUF conversion failed: ${line}`);
  }
  renameSync(tmp, outFile);
}
