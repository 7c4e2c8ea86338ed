// The experiment file (docs/experiments.md): which configurations (rows) are trained under which
// seeds and scored on which benchmarks (columns). Read and checked whole before anything runs, so a
// mistake in the last row is reported before hours of training on the first.
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { syntaxError } from '../config/yaml-error.ts';
import { ExperimentError } from './experiment-error.ts';
import { loadConfig } from '../config/load.ts';
import type { MarftConfig } from '../config/schema.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { TaskOptionError } from '../tasks/options.ts';
import { setArgs, type SetMapping } from './set-args.ts';
import { checkTask } from './task-check.ts';

export interface ExperimentRow {
  name: string;
  /** The configuration file, resolved against the experiment file's folder. */
  config: string;
  set: SetMapping;
  /** A prompt-only row: no training, every agent on the frozen base (`marft eval --base`). */
  base: boolean;
  /** This row's training seeds (the experiment's unless the row names its own). */
  seeds: number[];
  /** The row names its own seeds (`--quick` keeps them: a prompt-only row's single seed). */
  ownSeeds?: boolean;
}

export interface ExperimentColumn {
  name: string;
  set: SetMapping;
}

export interface Experiment {
  name: string;
  file: string;
  rows: ExperimentRow[];
  columns: ExperimentColumn[];
  seeds: number[];
  set: SetMapping;
  /** The file's `quick` section: the smaller grid `--quick` runs (absent: the file offers none). */
  quick?: QuickVariant;
  /** Keys applied after each row's own `set` (a quick variant's budget); empty otherwise. */
  after?: SetMapping;
}

/** `quick: { seeds?, set? }`: the same rows and columns with fewer seeds and smaller budgets. */
export interface QuickVariant {
  seeds?: number[];
  set: SetMapping;
}

export const DEFAULT_SEEDS = [0, 1, 2, 3, 4];
const MAX_SEED = 4_294_967_295;
/** Names become folder names (OUT/runs/<row>) and table headers: no separators, nothing hidden. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.+-]*$/;

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkKeys(where: string, value: Record<string, unknown>, allowed: string[], fail: (why: string) => never): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${where}${key}: unknown key; allowed keys${where ? ` of ${where.slice(0, -1)}` : ''}: ${allowed.join(', ')}`);
}

function readName(where: string, value: unknown, fail: (why: string) => never): string {
  if (typeof value !== 'string' || value === '') fail(`${where}: a name is required (letters, digits, _ . + -)`);
  if (!NAME.test(value as string)) fail(`${where}: '${value}' is not a usable name (letters, digits and _ . + - only, not starting with a sign or dot: it names a folder)`);
  return value as string;
}

function readSet(where: string, value: unknown, fail: (why: string) => never): SetMapping {
  if (value === undefined || value === null) return {};
  if (!isMapping(value)) fail(`${where}: must be a mapping of dotted configuration keys to values (e.g. { train.steps: 2 })`);
  return value as SetMapping;
}

function readSeeds(where: string, value: unknown, fail: (why: string) => never): number[] {
  if (!Array.isArray(value) || value.length === 0) fail(`${where}: must be a non-empty list of seeds (e.g. [0, 1, 2, 3, 4])`);
  const seeds = value as unknown[];
  for (const s of seeds) if (typeof s !== 'number' || !Number.isInteger(s) || s < 0 || s > MAX_SEED) fail(`${where}: ${JSON.stringify(s)} is not a seed (an integer from 0 to ${MAX_SEED})`);
  if (new Set(seeds).size !== seeds.length) fail(`${where}: a seed is listed twice`);
  return seeds as number[];
}

function uniqueNames(where: string, names: string[], fail: (why: string) => never): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) fail(`${where}: the name '${n}' is used twice`);
    seen.add(n);
  }
}

/** Reads FILE's structure (no configuration loaded yet); every mistake is one line naming the key. */
export async function readExperimentFile(file: string): Promise<Experiment> {
  const fail = (why: string): never => {
    throw new ExperimentError(`${file}: ${why}`);
  };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') fail('no such file');
    if (code === 'EISDIR' || (await stat(file).then((s) => s.isDirectory(), () => false))) fail('is a folder, not an experiment file');
    fail(`cannot be read (${code ?? (err as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text!);
  } catch (err) {
    const syntax = syntaxError(file, text!, err, 'YAML');
    const error = new ExperimentError(syntax.message);
    if (syntax.frame) error.frame = syntax.frame;
    throw error;
  }
  if (!isMapping(raw)) fail('an experiment file is a mapping with name, rows and columns (docs/experiments.md)');
  const top = raw as Record<string, unknown>;
  checkKeys('', top, ['name', 'rows', 'columns', 'seeds', 'set', 'quick'], fail);
  const name = readName('name', top.name, fail);
  const seeds = top.seeds === undefined ? DEFAULT_SEEDS : readSeeds('seeds', top.seeds, fail);
  const set = readSet('set', top.set, fail);
  if (!Array.isArray(top.rows) || top.rows.length === 0) fail('rows: must be a non-empty list of rows ({ name, config, set?, base?, seeds? })');
  const folder = dirname(resolve(file));
  const rows = (top.rows as unknown[]).map((r, i): ExperimentRow => {
    const where = `rows[${i}]`;
    if (!isMapping(r)) fail(`${where}: must be a mapping { name, config, set?, base?, seeds? }`);
    const row = r as Record<string, unknown>;
    checkKeys(`${where}.`, row, ['name', 'config', 'set', 'base', 'seeds'], fail);
    const rowName = readName(`${where}.name`, row.name, fail);
    if (typeof row.config !== 'string' || row.config === '') fail(`rows.${rowName}.config: the configuration file is required (a path relative to the experiment file)`);
    if (row.base !== undefined && typeof row.base !== 'boolean') fail(`rows.${rowName}.base: must be true or false`);
    return {
      name: rowName,
      config: resolve(folder, row.config as string),
      set: readSet(`rows.${rowName}.set`, row.set, fail),
      base: row.base === true,
      seeds: row.seeds === undefined ? seeds : readSeeds(`rows.${rowName}.seeds`, row.seeds, fail),
      ...(row.seeds === undefined ? {} : { ownSeeds: true }),
    };
  });
  uniqueNames('rows', rows.map((r) => r.name), fail);
  if (!Array.isArray(top.columns) || top.columns.length === 0) fail('columns: must be a non-empty list of benchmarks ({ name, set? })');
  const columns = (top.columns as unknown[]).map((c, i): ExperimentColumn => {
    const where = `columns[${i}]`;
    if (!isMapping(c)) fail(`${where}: must be a mapping { name, set? }`);
    const col = c as Record<string, unknown>;
    checkKeys(`${where}.`, col, ['name', 'set'], fail);
    const colName = readName(`${where}.name`, col.name, fail);
    if (colName === 'average') fail(`${where}.name: 'average' is the table's own column`);
    return { name: colName, set: readSet(`columns.${colName}.set`, col.set, fail) };
  });
  uniqueNames('columns', columns.map((c) => c.name), fail);
  let quick: QuickVariant | undefined;
  if (top.quick !== undefined) {
    if (!isMapping(top.quick)) fail('quick: must be a mapping { seeds?, set? } (the grid --quick runs)');
    const q = top.quick as Record<string, unknown>;
    checkKeys('quick.', q, ['seeds', 'set'], fail);
    quick = { set: readSet('quick.set', q.set, fail), ...(q.seeds === undefined ? {} : { seeds: readSeeds('quick.seeds', q.seeds, fail) }) };
  }
  return { name, file, rows, columns, seeds, set, ...(quick ? { quick } : {}) };
}

/**
 * The grid `--quick` runs: named `<name>-quick` (its default --out is its own, so its runs never mix
 * with the full grid's), every row under the quick seeds except a row that names its own (a
 * prompt-only row's one seed), and the quick `set` applied after each row's own, so a budget key
 * there wins over a row's.
 */
export function quickExperiment(exp: Experiment): Experiment {
  const quick = exp.quick;
  if (!quick) throw new ExperimentError(`${exp.file}: --quick: this file has no quick section (quick: { seeds, set }, docs/experiments.md)`);
  const seeds = quick.seeds ?? exp.seeds;
  return { ...exp, name: `${exp.name}-quick`, seeds, rows: exp.rows.map((r) => (r.ownSeeds ? r : { ...r, seeds })), after: quick.set };
}

/** The `--set` list that trains `row` under `seed`: experiment, row, the quick budget, command line, then the seed. */
export function trainingSets(exp: Experiment, row: ExperimentRow, seed: number, cliSets: readonly string[]): string[] {
  return [...setArgs(exp.set), ...setArgs(row.set), ...setArgs(exp.after ?? {}), ...cliSets, `seed=${seed}`];
}

/** The `--set` list that scores `row` under `seed` on `column`: the training list with the column's keys before the command line's. */
export function evaluationSets(exp: Experiment, row: ExperimentRow, column: ExperimentColumn, seed: number, cliSets: readonly string[]): string[] {
  return [...setArgs(exp.set), ...setArgs(row.set), ...setArgs(exp.after ?? {}), ...setArgs(column.set), ...cliSets, `seed=${seed}`];
}

/** A configuration loaded as `marft train`/`eval` will load it, its task checked; a failure names the row (and column). */
export async function loadFor(where: string, file: string, sets: string[]): Promise<MarftConfig> {
  try {
    const config = await loadConfig(file, sets);
    checkTask(config);
    return config;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof TaskOptionError) {
      const error = new ExperimentError(`${where}: ${err.message}`);
      if (err instanceof ConfigError && err.frame) error.frame = err.frame;
      throw error;
    }
    throw err;
  }
}

/**
 * Loads every row's training configuration and every row × column evaluation configuration (under
 * the first seed: the seed is the one key that varies per run, and any seed the file lists is valid),
 * so that every configuration the experiment will use is known to load before anything runs.
 */
export async function validateExperiment(exp: Experiment, cliSets: readonly string[]): Promise<void> {
  for (const row of exp.rows) {
    const seed = row.seeds[0]!;
    if (!row.base) await loadFor(`row ${row.name}`, row.config, trainingSets(exp, row, seed, cliSets));
    for (const column of exp.columns) await loadFor(`row ${row.name} × column ${column.name}`, row.config, evaluationSets(exp, row, column, seed, cliSets));
  }
}

/** The rows `--rows a,b` selects, in the file's order; an unknown name is one line listing the known ones. */
export function selectRows(exp: Experiment, names: string[] | undefined): ExperimentRow[] {
  if (!names) return exp.rows;
  const known = exp.rows.map((r) => r.name);
  for (const n of names) if (!known.includes(n)) throw new ExperimentError(`--rows: no row named '${n}' (rows: ${known.join(', ')})`);
  return exp.rows.filter((r) => names.includes(r.name));
}

/**
 * `--seeds a,b`: each row's runs restricted to these training seeds (a row with none of them runs
 * nothing), so a grid can be run a few seeds at a time and completed later on the same --out; the
 * table still lists every seed the file plans. A seed no row has is one line listing the seeds.
 */
export function selectSeeds(rows: readonly ExperimentRow[], flag: string | undefined): ExperimentRow[] {
  if (flag === undefined) return [...rows];
  const known = [...new Set(rows.flatMap((r) => r.seeds))].sort((a, b) => a - b);
  const seeds = flag.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    if (!/^\d+$/.test(s)) throw new ExperimentError(`--seeds: got '${s}', expected training seeds as integers >= 0, e.g. --seeds 0,1`);
    const seed = Number(s);
    if (!known.includes(seed)) throw new ExperimentError(`--seeds: no row has seed ${seed} (seeds: ${known.join(', ')})`);
    return seed;
  });
  if (seeds.length === 0) throw new ExperimentError('--seeds needs at least one training seed, e.g. --seeds 0,1');
  return rows.map((r) => ({ ...r, seeds: r.seeds.filter((s) => seeds.includes(s)) })).filter((r) => r.seeds.length > 0);
}
