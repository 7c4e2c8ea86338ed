// Runs an experiment (docs/experiments.md): for every row and training seed, the run folder
// OUT/runs/<row>/seed-<s> trained by `marft train` (resumed when half-finished, skipped when
// finished), then scored on every column by `marft eval`, each result appended to OUT/results.jsonl
// the moment it exists. Everything is decided from what is on disk, so a rerun after any
// interruption continues where the last one stopped, and recomputes nothing already recorded.
// At the end of every call the outputs are rebuilt from results.jsonl (and the runs' metrics.jsonl):
// table.md, table.json, results.json and curves/<column>.svg.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { MarftConfig } from '../config/schema.ts';
import { writeFileAtomic } from '../runs/checkpoint.ts';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { acquireRunLock } from '../runs/run-lock.ts';
import { formatFields } from '../runs/format-version.ts';
import { writing } from '../runs/write-errors.ts';
import { evaluationSets, loadFor, trainingSets, type Experiment, type ExperimentRow } from './experiment-file.ts';
import { runMarft } from './marft-child.ts';
import { appendResult, readResults, resultKey, type ExperimentResult } from './results.ts';
import { runStatus, type RunStatus } from './run-status.ts';
import { buildTable, tableMarkdown, type ExperimentTable } from './table.ts';
import { buildResultsJson } from './results-json.ts';
import { writeCurves } from './curves.ts';
import { ExperimentProgress } from './progress.ts';

export interface ExperimentOptions {
  out: string;
  rows: ExperimentRow[];
  /** The command line's --set, applied after the file's own. */
  sets: string[];
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
  /** Test hook: stop (as an interruption would) once this many runs have been trained in this call. */
  stopAfterTrainedRuns?: number;
}

export const runDirOf = (out: string, row: string, seed: number): string => join(resolve(out), 'runs', row, `seed-${seed}`);
export const resultsFile = (out: string): string => join(resolve(out), 'results.jsonl');

interface PlannedRun {
  row: ExperimentRow;
  seed: number;
  runDir: string;
  /** null for a base row (nothing to train). */
  training: { config: MarftConfig; sets: string[]; status: RunStatus } | null;
  evals: { column: string; sets: string[]; done: ExperimentResult | null }[];
}

/** What the experiment would do now: every run with its status and every evaluation, done or not. */
export async function planExperiment(exp: Experiment, opts: ExperimentOptions, notice: Notice = stderrNotice): Promise<PlannedRun[]> {
  const done = new Map<string, ExperimentResult>();
  for (const r of await readResults(resultsFile(opts.out), false)) if (!done.has(resultKey(r.row, r.seed, r.column))) done.set(resultKey(r.row, r.seed, r.column), r);
  const plan: PlannedRun[] = [];
  for (const row of opts.rows) {
    for (const seed of row.seeds) {
      const runDir = runDirOf(opts.out, row.name, seed);
      let training: PlannedRun['training'] = null;
      if (!row.base) {
        const sets = trainingSets(exp, row, seed, opts.sets);
        const where = `row ${row.name} seed ${seed}`;
        const config = await loadFor(where, row.config, sets);
        training = { config, sets, status: await runStatus(where, runDir, config, notice) };
      }
      const evals = exp.columns.map((c) => ({ column: c.name, sets: evaluationSets(exp, row, c, seed, opts.sets), done: done.get(resultKey(row.name, seed, c.name)) ?? null }));
      plan.push({ row, seed, runDir, training, evals });
    }
  }
  return plan;
}

function statusText(run: PlannedRun): string {
  const t = run.training;
  if (!t) return 'base row: nothing to train';
  if (t.status.kind === 'new') return `train ${t.config.train.steps} steps`;
  if (t.status.kind === 'partial') return `resume from step ${t.status.step} of ${t.status.steps}`;
  return `trained (step ${t.status.step}), skipped`;
}

/** The plan as `--dry-run` prints it. */
export function planText(exp: Experiment, plan: PlannedRun[], out: string): string {
  // A "run" is one row × seed; a base row's runs train nothing (their evaluations score the untrained
  // system), so the header says how many of them train, and the footer counts against that number.
  const trained = plan.filter((r) => r.training !== null).length;
  const base = plan.length - trained;
  const evaluations = plan.reduce((s, r) => s + r.evals.length, 0);
  const header = `${plan.length} runs (row × seed: ${trained} trained${base > 0 ? `, ${base} of base rows, which train nothing` : ''})`;
  const lines = [`experiment ${exp.name}: ${header}, ${evaluations} evaluations (run × column), into ${resolve(out)}`];
  let toTrain = 0;
  let toEval = 0;
  for (const run of plan) {
    if (run.training && run.training.status.kind !== 'finished') toTrain++;
    lines.push(`  ${run.row.name} seed ${run.seed}: ${statusText(run)}${run.training ? ` (${run.runDir})` : ''}`);
    for (const e of run.evals) {
      if (!e.done) toEval++;
      lines.push(`    ${e.column}: ${e.done ? `done, score ${e.done.score}` : 'to evaluate'}`);
    }
  }
  lines.push(`to do: ${toTrain} runs to train or resume, ${toEval} evaluations (of ${trained} runs that train and ${evaluations} evaluations in the plan; the others are done)`);
  return lines.join('\n');
}

const seconds = (t0: number): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

/** Thrown by the test hook: the experiment stopped as if interrupted. */
export class ExperimentStopped extends Error {
  override name = 'ExperimentStopped';
}

/** Trains and evaluates everything the plan has not done yet, then writes the table. */
export async function runExperiment(exp: Experiment, opts: ExperimentOptions): Promise<ExperimentTable> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const out = resolve(opts.out);
  await writing(out, () => mkdir(out, { recursive: true }));
  // One experiment process per OUT: two would evaluate the same runs and append the same results twice.
  const lock = await acquireRunLock(out, stderrNotice);
  try {
    return await runPlan(exp, opts, out, log);
  } finally {
    await lock.release();
  }
}

async function runPlan(exp: Experiment, opts: ExperimentOptions, out: string, log: (line: string) => void): Promise<ExperimentTable> {
  const file = resultsFile(out);
  await readResults(file); // repairs a line a kill cut short, before anything is appended after it
  const plan = await planExperiment(exp, opts);
  const progress = new ExperimentProgress({
    cells: plan.reduce((s, r) => s + r.evals.length, 0),
    cellsDone: plan.reduce((s, r) => s + r.evals.filter((e) => e.done).length, 0),
    runs: plan.filter((r) => r.training).length,
    runsDone: plan.filter((r) => r.training?.status.kind === 'finished').length,
    stepsLeft: plan.reduce((s, r) => s + stepsToTrain(r), 0),
  });
  log(progress.plan());
  let trained = 0;
  for (const run of plan) {
    const name = `${run.row.name} seed ${run.seed}`;
    let checkpoint: string | null = null;
    if (run.training) {
      const { status, sets, config } = run.training;
      if (status.kind === 'finished') checkpoint = status.checkpoint;
      else {
        const t0 = Date.now();
        log(`experiment: train ${name}: start (${statusText(run)})`);
        await writing(run.runDir, () => mkdir(run.runDir, { recursive: true }));
        // --no-eval: the run's checkpoint is scored below by `marft eval` on every column; the
        // trainer's own scoring before the first step and after the last would only repeat it.
        const args = status.kind === 'partial'
          ? ['train', '--resume', run.runDir, '--no-progress', '--no-eval']
          : ['train', run.row.config, '--run-dir', run.runDir, '--no-progress', '--no-eval', ...sets.flatMap((s) => ['--set', s])];
        const result = await runMarft(`row ${run.row.name} seed ${run.seed}`, args);
        checkpoint = String(result.checkpoint);
        log(`experiment: train ${name}: done in ${seconds(t0)} (${config.train.steps} steps, score_mean ${result.score_mean})`);
        progress.trained(stepsToTrain(run), (Date.now() - t0) / 1000);
        log(progress.line());
        trained++;
        if (opts.stopAfterTrainedRuns !== undefined && trained >= opts.stopAfterTrainedRuns) throw new ExperimentStopped(`stopped after ${trained} trained runs`);
      }
    }
    for (const e of run.evals) {
      if (e.done) continue;
      const t0 = Date.now();
      log(`experiment: eval ${name} on ${e.column}: start`);
      const target = run.training ? ['--checkpoint', checkpoint!] : ['--base'];
      const r = await runMarft(`row ${run.row.name} seed ${run.seed} column ${e.column}`, ['eval', run.row.config, ...target, ...e.sets.flatMap((s) => ['--set', s])]);
      const result: ExperimentResult = {
        row: run.row.name,
        seed: run.seed,
        column: e.column,
        score: r.score as number,
        perSeed: r.perSeed as number[],
        ...(Array.isArray(r.passAtK) ? { passAtK: r.passAtK as number[] } : {}),
        problems: r.problems as number,
        step: run.training ? (r.step as number) : null,
        checkpoint: run.training ? (r.checkpoint as string) : null,
      };
      await appendResult(file, result);
      log(`experiment: eval ${name} on ${e.column}: done in ${seconds(t0)}, score ${result.score}`);
      progress.evaluated((Date.now() - t0) / 1000);
      log(progress.line());
    }
  }
  return writeOutputs(exp, out);
}

/** The training steps a planned run still needs. */
function stepsToTrain(run: PlannedRun): number {
  const t = run.training;
  if (!t || t.status.kind === 'finished') return 0;
  return t.config.train.steps - (t.status.kind === 'partial' ? t.status.step : 0);
}

/**
 * Every output rebuilt from OUT/results.jsonl (and the runs' metrics.jsonl) alone: table.md and
 * table.json, results.json, curves/<column>.svg. Returns the table.
 */
export async function writeOutputs(exp: Experiment, out: string): Promise<ExperimentTable> {
  const table = await writeTable(exp, out);
  const results = await readResults(resultsFile(out), false);
  await writeFileAtomic(join(resolve(out), 'results.json'), `${JSON.stringify(buildResultsJson(exp, results), null, 2)}\n`);
  await writeCurves(exp, out, results);
  return table;
}

/** OUT/table.md and OUT/table.json from OUT/results.jsonl alone. */
export async function writeTable(exp: Experiment, out: string): Promise<ExperimentTable> {
  const table = buildTable(exp, await readResults(resultsFile(out), false));
  await mkdir(resolve(out), { recursive: true });
  await writeFileAtomic(join(resolve(out), 'table.json'), `${JSON.stringify({ ...formatFields('marft-experiment-table'), ...table }, null, 2)}\n`);
  await writeFileAtomic(join(resolve(out), 'table.md'), tableMarkdown(table));
  return table;
}
