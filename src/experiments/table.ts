// The experiment's table (OUT/table.md, OUT/table.json), computed from results.jsonl alone: one row
// per experiment row, one column per benchmark plus their average, each cell the mean and sample
// standard deviation (n − 1) over training seeds of the per-run scores (spec section 7), with n.
import type { Experiment } from './experiment-file.ts';
import { resultKey, type ExperimentResult } from './results.ts';

export interface TableCell {
  mean: number;
  /** Sample standard deviation over the runs (n − 1); null when n = 1. */
  std: number | null;
  n: number;
  /** The training seeds the cell averages, in the file's order. */
  seeds: number[];
}

export interface ExperimentTable {
  name: string;
  note: string;
  columns: string[];
  rows: { row: string; seeds: number[]; cells: Record<string, TableCell | null> }[];
}

export const AVERAGE = 'average';

export function sampleStd(xs: number[]): number | null {
  if (xs.length < 2) return null;
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1));
}

function cell(bySeed: [number, number][]): TableCell | null {
  if (bySeed.length === 0) return null;
  const xs = bySeed.map(([, x]) => x);
  return { mean: xs.reduce((s, x) => s + x, 0) / xs.length, std: sampleStd(xs), n: xs.length, seeds: bySeed.map(([s]) => s) };
}

/**
 * A benchmark's cell holds every seed with a result. The average column holds, per seed whose run
 * has a result on every benchmark, the mean over benchmarks; its mean and std are over those seeds.
 */
export function buildTable(exp: Experiment, results: ExperimentResult[]): ExperimentTable {
  const found = new Map<string, ExperimentResult>();
  for (const r of results) if (!found.has(resultKey(r.row, r.seed, r.column))) found.set(resultKey(r.row, r.seed, r.column), r);
  const columns = exp.columns.map((c) => c.name);
  const rows = exp.rows.map((row) => {
    const cells: Record<string, TableCell | null> = {};
    for (const column of columns) {
      cells[column] = cell(row.seeds.flatMap((s): [number, number][] => {
        const r = found.get(resultKey(row.name, s, column));
        return r ? [[s, r.score]] : [];
      }));
    }
    cells[AVERAGE] = cell(row.seeds.flatMap((s): [number, number][] => {
      const scores = columns.map((c) => found.get(resultKey(row.name, s, c))?.score);
      return scores.every((x) => x !== undefined) ? [[s, scores.reduce((a, x) => a + x!, 0) / scores.length]] : [];
    }));
    return { row: row.name, seeds: row.seeds, cells };
  });
  return {
    name: exp.name,
    note: 'mean ± sample standard deviation (n − 1) over training seeds of each run\'s score (the mean of its per-eval-seed averages); n = runs with a result; average = per run, the mean over the benchmarks, for runs scored on all of them',
    columns: [...columns, AVERAGE],
    rows,
  };
}

const fmt = (x: number): string => x.toFixed(4);

function cellText(c: TableCell | null, planned: number): string {
  if (!c) return 'missing';
  const std = c.std === null ? '' : ` ± ${fmt(c.std)}`;
  return `${fmt(c.mean)}${std} (n=${c.n}${c.n < planned ? ` of ${planned}` : ''})`;
}

export function tableMarkdown(t: ExperimentTable): string {
  const lines = [
    `# ${t.name}`,
    '',
    `Each cell: ${t.note}. "missing": no run of that row has a result there yet; "n=k of m": m runs are planned.`,
    '',
    `| row | ${t.columns.join(' | ')} |`,
    `|---|${t.columns.map(() => '---').join('|')}|`,
    ...t.rows.map((r) => `| ${r.row} | ${t.columns.map((c) => cellText(r.cells[c] ?? null, r.seeds.length)).join(' | ')} |`),
  ];
  return `${lines.join('\n')}\n`;
}
