// The demo's closing output: the results table and the final JSON line.
import type { TeamScore } from './team-score.ts';

export interface TableRow {
  system: string;
  score: TeamScore;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** A fixed-width table: held-out accuracy, right-plan rate and plan-following rate per system. */
export function resultsTable(rows: TableRow[]): string {
  const header = ['system', 'held-out accuracy', 'right plans', 'Solver follows plan'];
  const body = rows.map((r) => [r.system, pct(r.score.score), pct(r.score.rightPlanRate), pct(r.score.followRate)]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((row) => row[c]!.length)));
  const line = (cells: string[]) => '| ' + cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, c) => (c === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|';
  return [line(header), rule, ...body.map(line)].join('\n');
}

export const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
