// Checkpoints, written atomically and checked on read. Everything goes to a temporary folder, the
// parameters are checked finite (a diverged state is never kept), a manifest of every file's size
// and SHA-256 is written last, and the folder is renamed into place (a rename within one file system
// is atomic); then the `latest` pointer is replaced the same way. A run killed at any moment
// (kill -9) therefore finds the previous checkpoint or the new one, complete. On read, a checkpoint
// is used only if its manifest matches its files; a damaged pointer or checkpoint falls back to the
// newest intact one, with a notice.
//
//   RUN/checkpoints/step-000010/
//     adapters/<name>/      engine.saveAdapter (PEFT format on the embedded engine)
//     critics/<name>/       engine.saveCritic
//     optim/<kind>-<name>   engine.saveOptimizerState
//     metrics.jsonl         the run's metrics lines up to this step (restores a damaged RUN/metrics.jsonl)
//     state.json            { format, version, step, metricsLines, seed, adapters, critics, trainer, config }
//     manifest.json         size and sha256 of each file above (src/runs/manifest.ts), written last
//   RUN/checkpoints/latest.json   { "format": "marft-run-pointer", "version": 1, "dir": "step-000010" }
// state.json and latest.json carry format versions (src/runs/format-version.ts): a newer one is
// refused, one without a version (written before versions existed) is read as version 1. A full disk
// or a read-only checkpoints folder is one line (src/runs/write-errors.ts), with the previous
// checkpoints untouched.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, Trainable } from '../engine/types.ts';
import type { MarftConfig } from '../config/schema.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { formatFields, formatVersion } from './format-version.ts';
import { assertFolderFinite } from './finite-guard.ts';
import { manifestProblem, writeManifest } from './manifest.ts';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { DamagedRunError } from './run-errors.ts';
import { trackTemporary } from './temporaries.ts';
import type { TrainerState } from './trainer-state.ts';
import { writing } from './write-errors.ts';

export { writeFileAtomic } from './atomic-write.ts';

export interface CheckpointState {
  /** Completed training steps; the resumed run starts at this step. */
  step: number;
  /** Lines of metrics.jsonl that belong to the completed steps. */
  metricsLines: number;
  /** Run seed; with `step` it determines every later sampling seed (no other RNG state exists). */
  seed: number;
  adapters: string[];
  critics: string[];
  /** What the trainer carries from step to step besides the trainables (./trainer-state.ts). */
  trainer?: TrainerState;
  /** The resolved configuration the run was trained with up to this step; a resume is checked against it. */
  config?: MarftConfig;
}

const STEP_DIR = /^step-\d+$/;
/** Adapter and critic names become folder names: no separators, no '..'. */
const SAFE_NAME = /^(?!\.\.?$)[A-Za-z0-9_.-]+$/;

const optimFile = (t: Trainable): string => (t.kind === 'base' ? 'base' : `${t.kind}-${t.name}`);

/** The checkpoint folder's name for a step. */
export const checkpointName = (step: number): string => `step-${String(step).padStart(6, '0')}`;

/**
 * Writes the engine's trainables and `state` as RUN/checkpoints/step-N and points `latest` at it.
 * `metricsText` is metrics.jsonl up to this step. Throws NonFiniteStateError (and keeps nothing)
 * when a parameter the engine wrote is not finite.
 */
export async function saveCheckpoint(engine: Engine, runDir: string, state: CheckpointState, keep: number, metricsText = ''): Promise<string> {
  const root = join(runDir, 'checkpoints');
  const name = checkpointName(state.step);
  const final = join(root, name);
  const tmp = join(root, `.tmp-${name}-${process.pid}`);
  const untrack = trackTemporary(tmp);
  try {
    await writing(final, async () => {
      await mkdir(root, { recursive: true });
      await rm(tmp, { recursive: true, force: true });
      await mkdir(join(tmp, 'optim'), { recursive: true });
      for (const a of state.adapters) {
        await engine.saveAdapter(a, join(tmp, 'adapters', a));
        await engine.saveOptimizerState({ kind: 'adapter', name: a }, join(tmp, 'optim', optimFile({ kind: 'adapter', name: a })));
      }
      for (const c of state.critics) {
        await engine.saveCritic(c, join(tmp, 'critics', c));
        await engine.saveOptimizerState({ kind: 'critic', name: c }, join(tmp, 'optim', optimFile({ kind: 'critic', name: c })));
      }
      await assertFolderFinite(tmp);
      await writeFile(join(tmp, 'metrics.jsonl'), metricsText);
      await writeFile(join(tmp, 'state.json'), JSON.stringify({ ...state, ...formatFields('marft-checkpoint-state') }, null, 2));
      await writeManifest(tmp);
      if (existsSync(final)) {
        // The same step saved again (a resume that stops where it started): the old folder is moved
        // aside, not deleted, until the new one is in place.
        const old = join(root, `.tmp-${name}-${process.pid}-old`);
        await rm(old, { recursive: true, force: true });
        await rename(final, old);
        await rename(tmp, final);
        await rm(old, { recursive: true, force: true });
      } else {
        await rename(tmp, final);
      }
    });
  } catch (err) {
    // Best effort (a folder turned read-only keeps it; the next run's leftover sweep removes it).
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  } finally {
    untrack();
  }
  await writeFileAtomic(join(root, 'latest.json'), JSON.stringify({ ...formatFields('marft-run-pointer'), dir: name }));
  // Older checkpoints beyond `keep` go only after the new one is in place.
  const all = (await readdir(root)).filter((d) => STEP_DIR.test(d)).sort();
  for (const old of all.slice(0, Math.max(0, all.length - keep))) await rm(join(root, old), { recursive: true, force: true });
  return final;
}

/** Null when `dir` is an intact checkpoint (a real folder whose manifest matches); otherwise why not. */
export async function checkpointProblem(dir: string): Promise<string | null> {
  try {
    const st = await lstat(dir);
    if (!st.isDirectory()) return 'not a folder';
  } catch {
    return 'missing';
  }
  return manifestProblem(dir);
}

/** The name a latest.json points at, or why it cannot be followed. */
async function readPointer(file: string): Promise<{ dir: string } | { problem: string }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return { problem: 'checkpoints/latest.json is damaged (not valid JSON)' };
  }
  if (formatVersion(file, 'marft-run-pointer', parsed) === null) return { problem: 'checkpoints/latest.json is damaged (no valid version)' };
  const dir = (parsed as { dir?: unknown } | null)?.dir;
  // The pointer comes from disk: only a step folder of this run, never '../x' or an absolute path.
  if (typeof dir !== 'string' || !STEP_DIR.test(dir)) return { problem: `checkpoints/latest.json names ${JSON.stringify(dir)}, which is not a checkpoint folder inside this run; ignored` };
  return { dir };
}

/** The checkpoint folder latest.json names (without checking it), or null when the pointer is missing or damaged. */
export async function pointedCheckpoint(runDir: string): Promise<string | null> {
  const file = join(runDir, 'checkpoints', 'latest.json');
  if (!existsSync(file)) return null;
  const pointer = await readPointer(file);
  return 'dir' in pointer ? join(runDir, 'checkpoints', pointer.dir) : null;
}

/**
 * The folder of the run's checkpoint to resume from, or null when it has none. latest.json is
 * followed when it names an intact checkpoint of this run; otherwise (damaged, pointing outside the
 * run, or naming a damaged or missing folder: a kill between writing a checkpoint and updating the
 * pointer) the newest intact `step-*` folder is used, with a notice. Throws DamagedRunError when
 * checkpoints exist but none is intact (nothing is resumed or overwritten then).
 */
export async function latestCheckpoint(runDir: string, notice: Notice = stderrNotice): Promise<string | null> {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return null;
  let pointerProblem: string | null = null;
  let checked: string | null = null;
  const problems: string[] = [];
  if (existsSync(join(root, 'latest.json'))) {
    const pointer = await readPointer(join(root, 'latest.json'));
    if ('dir' in pointer) {
      const problem = await checkpointProblem(join(root, pointer.dir));
      if (problem === null) return join(root, pointer.dir);
      checked = pointer.dir;
      pointerProblem = `checkpoints/latest.json names ${pointer.dir}, which is ${problem === 'missing' ? 'missing' : `damaged (${problem})`}`;
      if (problem !== 'missing') problems.push(`${pointer.dir}: ${problem}`);
    } else {
      pointerProblem = pointer.problem;
    }
  } else {
    pointerProblem = 'checkpoints/latest.json is missing';
  }
  const steps = (await readdir(root)).filter((d) => STEP_DIR.test(d)).sort().reverse();
  for (const d of steps) {
    if (d === checked) continue;
    const problem = await checkpointProblem(join(root, d));
    if (problem === null) {
      notice(`${pointerProblem}; resuming from ${d}, the newest intact checkpoint`);
      return join(root, d);
    }
    problems.push(`${d}: ${problem}`);
  }
  if (problems.length > 0) {
    throw new DamagedRunError(`${root} holds checkpoints but none is intact (${problems.join('; ')}); nothing was changed. Move the run folder away to start again`);
  }
  if (existsSync(join(root, 'latest.json'))) notice(`${pointerProblem}, and no checkpoint is left; the run starts from step 0`);
  return null;
}

/** The checkpoint's state.json, checked for the fields a resume relies on. */
export async function readCheckpointState(dir: string): Promise<CheckpointState> {
  let state: CheckpointState;
  try {
    state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as CheckpointState;
  } catch {
    throw new DamagedRunError(`checkpoint ${dir}: state.json is missing or not valid JSON`);
  }
  if (formatVersion(join(dir, 'state.json'), 'marft-checkpoint-state', state) === null) throw new DamagedRunError(`checkpoint ${dir}: state.json has no valid version`);
  const names = (xs: unknown): boolean => Array.isArray(xs) && xs.every((x) => typeof x === 'string' && SAFE_NAME.test(x));
  if (!Number.isInteger(state?.step) || state.step < 0 || !Number.isInteger(state.metricsLines) || state.metricsLines < 0 || !names(state.adapters) || !names(state.critics)) {
    throw new DamagedRunError(`checkpoint ${dir}: state.json lacks a valid step, metricsLines, adapters or critics`);
  }
  return state;
}

/** Loads adapters and critics (trainable again, unlike the reference code) and their optimiser states, after checking the checkpoint is intact. */
export async function loadCheckpoint(engine: Engine, dir: string, options: { optimiser: boolean; checked?: boolean }): Promise<CheckpointState> {
  // `checked`: the caller has just checked this folder and nothing can change it (a reader's snapshot, ./checkpoint-snapshot.ts).
  const problem = options.checked ? null : await checkpointProblem(dir);
  if (problem !== null) throw new DamagedRunError(`checkpoint ${dir} is damaged: ${problem}`);
  const state = await readCheckpointState(dir);
  for (const a of state.adapters) {
    await engine.loadAdapter(a, join(dir, 'adapters', a));
    if (options.optimiser) await engine.loadOptimizerState({ kind: 'adapter', name: a }, join(dir, 'optim', optimFile({ kind: 'adapter', name: a })));
  }
  for (const c of state.critics) {
    await engine.loadCritic(c, join(dir, 'critics', c));
    if (options.optimiser) await engine.loadOptimizerState({ kind: 'critic', name: c }, join(dir, 'optim', optimFile({ kind: 'critic', name: c })));
  }
  return state;
}

/** The metrics lines a checkpoint covers, as written (null for a checkpoint without its copy). */
export async function checkpointMetrics(dir: string): Promise<string | null> {
  const file = join(dir, 'metrics.jsonl');
  return existsSync(file) ? readFile(file, 'utf8') : null;
}
