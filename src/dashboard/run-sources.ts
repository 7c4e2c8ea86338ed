// Which run folders a dashboard shows: each RUN_DIR given is a run folder (metrics.jsonl,
// config.json, samples/ or checkpoints/ inside, or nothing yet: a run about to start), or a folder
// holding run folders a few levels down: an experiment's OUT (OUT/runs/<row>/seed-<s>/,
// docs/experiments.md), the demo's folder (teams/<team>/), a folder of runs. Looked up again on every
// request, so the rows of an experiment appear as it starts them.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';

export interface DashboardRun {
  /** The run's path relative to the working folder: unique, and what the page names it by. */
  id: string;
  dir: string;
  /** An experiment's row and seed, when the folder sits at OUT/runs/<row>/seed-<s>. */
  row: string | null;
  seed: number | null;
}

const RUN_MARKERS = ['metrics.jsonl', 'config.json', 'samples', 'checkpoints'];
/** Folders inside a run that hold no runs (and may be large): never searched. */
const NOT_RUNS = new Set(['checkpoints', 'samples', 'model', 'adapters', 'node_modules']);
const SEARCH_DEPTH = 5;

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

export const isRunFolder = (dir: string): boolean => RUN_MARKERS.some((m) => existsSync(join(dir, m)));

function runsBelow(dir: string, depth: number, out: string[]): void {
  if (isRunFolder(dir)) {
    out.push(dir);
    return;
  }
  if (depth === 0) return;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith('.') || NOT_RUNS.has(name)) continue;
    const p = join(dir, name);
    if (isDir(p)) runsBelow(p, depth - 1, out);
  }
}

function describe(dir: string, cwd: string): DashboardRun {
  const rel = relative(cwd, dir);
  const id = rel === '' ? basename(dir) : rel.startsWith('..') ? dir : rel;
  const parts = dir.split(sep);
  const seedMatch = /^seed-(\d+)$/.exec(parts[parts.length - 1] ?? '');
  const isExperimentRow = seedMatch !== null && parts[parts.length - 3] === 'runs';
  return { id, dir, row: isExperimentRow ? parts[parts.length - 2]! : null, seed: isExperimentRow ? Number(seedMatch![1]) : null };
}

/** The runs of the folders given, in the order given (each folder's runs sorted by path). */
export function discoverRuns(dirs: readonly string[], cwd = process.cwd()): DashboardRun[] {
  const seen = new Set<string>();
  const runs: DashboardRun[] = [];
  for (const given of dirs) {
    const dir = resolve(cwd, given);
    const found: string[] = [];
    runsBelow(dir, SEARCH_DEPTH, found);
    // A folder with no runs below it yet is a run that has not written anything.
    for (const d of found.length ? found : [dir]) {
      if (seen.has(d)) continue;
      seen.add(d);
      runs.push(describe(d, cwd));
    }
  }
  return runs;
}
