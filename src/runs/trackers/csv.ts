// RUN/metrics.csv: metrics.jsonl as a table, one row per step, for spreadsheets and pandas. Columns
// are every key seen so far, in order of first appearance (a metric that appears later, such as
// eval_score, adds a column: the file is then rewritten whole). Empty cells: the metric does not
// apply at that step (null in metrics.jsonl). The rows always match metrics.jsonl's lines: on a
// resume the file is rewritten from the lines the checkpoint covers.
import { appendFile } from 'node:fs/promises';
import type { StepMetrics } from '../metrics-log.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import type { Tracker } from './tracker.ts';
import { writing } from '../write-errors.ts';

/** One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break. */
function cell(v: StepMetrics[string] | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export class CsvTracker implements Tracker {
  private readonly columns: string[] = [];
  private readonly rows: StepMetrics[];

  private constructor(private readonly file: string, previous: StepMetrics[]) {
    this.rows = [...previous];
    for (const m of previous) this.addColumns(m);
  }

  /** Opens RUN/metrics.csv, rewritten to hold exactly `previous` (the lines metrics.jsonl holds now). */
  static async open(file: string, previous: StepMetrics[]): Promise<CsvTracker> {
    const tracker = new CsvTracker(file, previous);
    await tracker.rewrite();
    return tracker;
  }

  /** Adds the keys of `m` not yet columns; true when there were any. */
  private addColumns(m: StepMetrics): boolean {
    const added = Object.keys(m).filter((k) => !this.columns.includes(k));
    this.columns.push(...added);
    return added.length > 0;
  }

  private line(m: StepMetrics): string {
    return `${this.columns.map((c) => cell(m[c])).join(',')}\n`;
  }

  private async rewrite(): Promise<void> {
    await writeFileAtomic(this.file, this.columns.length === 0 ? '' : `${this.columns.map((c) => cell(c)).join(',')}\n${this.rows.map((m) => this.line(m)).join('')}`);
  }

  async step(m: StepMetrics): Promise<void> {
    this.rows.push(m);
    if (this.addColumns(m)) await this.rewrite();
    else await writing(this.file, () => appendFile(this.file, this.line(m)));
  }

  async evaluation(): Promise<void> {}

  async close(): Promise<void> {}
}
