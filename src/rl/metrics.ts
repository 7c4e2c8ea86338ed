// Per-step metrics as JSON lines (RUN/metrics.jsonl) and a progress bar on a terminal.
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';

/** One line of metrics.jsonl. Keys ending in `_s` and `tokens_per_s` are timings (not reproducible). */
export type StepMetrics = Record<string, number | string | null>;

/** Keys whose values depend on wall-clock time, excluded when comparing runs. */
export function isTimingKey(key: string): boolean {
  return key.endsWith('_s') || key === 'tokens_per_s';
}

export class MetricsLog {
  constructor(readonly file: string) {}

  async append(m: StepMetrics): Promise<void> {
    await appendFile(this.file, `${JSON.stringify(m)}\n`);
  }

  /** Keeps the first `lines` complete lines (what a checkpoint covers); drops the rest, partial lines included. */
  async truncate(lines: number): Promise<void> {
    const kept = (await this.read()).slice(0, lines);
    await writeFile(this.file, kept.map((m) => `${JSON.stringify(m)}\n`).join(''));
  }

  async read(): Promise<StepMetrics[]> {
    if (!existsSync(this.file)) return [];
    const out: StepMetrics[] = [];
    for (const line of (await readFile(this.file, 'utf8')).split('\n')) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line) as StepMetrics);
      } catch {
        break; // a line cut by a kill: nothing after it is complete
      }
    }
    return out;
  }
}

/** A one-line progress bar on stderr, redrawn in place; silent when stderr is not a terminal. */
export class ProgressBar {
  private readonly enabled: boolean;
  constructor(private readonly total: number, enabled = process.stderr.isTTY === true) {
    this.enabled = enabled;
  }

  update(done: number, note: string): void {
    if (!this.enabled) return;
    const width = 24;
    const filled = Math.round((done / this.total) * width);
    process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total} ${note}\x1b[K`);
  }

  end(): void {
    if (this.enabled) process.stderr.write('\n');
  }
}
