// Checkpoints, written atomically: everything goes to a temporary folder that is renamed into
// place (a rename within one file system is atomic), then the `latest` pointer is replaced the
// same way. A run killed at any moment (kill -9) therefore finds either the previous checkpoint or
// the new one, complete.
//
//   RUN/checkpoints/step-000010/
//     adapters/<name>/      engine.saveAdapter (PEFT format on the embedded engine)
//     critics/<name>/       engine.saveCritic
//     optim/<kind>-<name>   engine.saveOptimizerState
//     state.json            { step, metricsLines, seed, ... }
//   RUN/checkpoints/latest.json   { "dir": "step-000010" }
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine, Trainable } from '../engine/types.ts';

export interface CheckpointState {
  /** Completed training steps; the resumed run starts at this step. */
  step: number;
  /** Lines of metrics.jsonl that belong to the completed steps. */
  metricsLines: number;
  /** Run seed; with `step` it determines every later sampling seed (no other RNG state exists). */
  seed: number;
  adapters: string[];
  critics: string[];
}

const optimFile = (t: Trainable): string => (t.kind === 'base' ? 'base' : `${t.kind}-${t.name}`);

/** Writes the text to `file` atomically (temp file + rename). */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

export async function saveCheckpoint(engine: Engine, runDir: string, state: CheckpointState, keep: number): Promise<string> {
  const root = join(runDir, 'checkpoints');
  await mkdir(root, { recursive: true });
  const name = `step-${String(state.step).padStart(6, '0')}`;
  const tmp = join(root, `.tmp-${name}-${process.pid}`);
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
  await writeFile(join(tmp, 'state.json'), JSON.stringify(state, null, 2));
  const final = join(root, name);
  await rm(final, { recursive: true, force: true });
  await rename(tmp, final);
  await writeFileAtomic(join(root, 'latest.json'), JSON.stringify({ dir: name }));
  // Older checkpoints beyond `keep` go only after the new one is in place.
  const all = (await readdir(root)).filter((d) => /^step-\d+$/.test(d)).sort();
  for (const old of all.slice(0, Math.max(0, all.length - keep))) await rm(join(root, old), { recursive: true, force: true });
  return final;
}

/**
 * The folder of the latest complete checkpoint of a run, or null. When `latest.json` names a folder
 * that is gone (a kill while a step's checkpoint was being saved a second time, between removing
 * the old folder and renaming the new one in), the newest complete `step-*` folder is used.
 */
export async function latestCheckpoint(runDir: string): Promise<string | null> {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return null;
  if (existsSync(join(root, 'latest.json'))) {
    const { dir } = JSON.parse(await readFile(join(root, 'latest.json'), 'utf8')) as { dir: string };
    if (existsSync(join(root, dir, 'state.json'))) return join(root, dir);
  }
  const complete = (await readdir(root)).filter((d) => /^step-\d+$/.test(d) && existsSync(join(root, d, 'state.json'))).sort();
  return complete.length > 0 ? join(root, complete[complete.length - 1]!) : null;
}

export async function readCheckpointState(dir: string): Promise<CheckpointState> {
  return JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as CheckpointState;
}

/** Loads adapters and critics (trainable again, unlike the reference code) and their optimiser states. */
export async function loadCheckpoint(engine: Engine, dir: string, options: { optimiser: boolean }): Promise<CheckpointState> {
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
