// Per-step metrics as JSON lines (RUN/metrics.jsonl). What else reports them as a run goes (the
// console, TensorBoard, CSV): src/runs/trackers/.
//
// Non-finite numbers: JSON has no NaN or Infinity (JSON.stringify writes null, which would read back
// as a different value), so a non-finite metric is written as the string "NaN", "Infinity" or
// "-Infinity" and read back as that number. A line therefore round-trips exactly; null stays null
// (a metric that does not apply at that step, e.g. the actor's loss during the critic warm-up).
import { appendFile, readFile, stat, truncate } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { writeFileAtomic } from './atomic-write.ts';
import { writing } from './write-errors.ts';

/** One line of metrics.jsonl. Keys ending in `_s` and `tokens_per_s` are timings (not reproducible). */
export type StepMetrics = Record<string, number | string | null>;

/** Keys whose values depend on wall-clock time, excluded when comparing runs. */
export function isTimingKey(key: string): boolean {
  return key.endsWith('_s') || key === 'tokens_per_s';
}

const NON_FINITE: Record<string, number> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };

/** One line of metrics.jsonl (newline included), non-finite numbers as strings. */
export function encodeMetrics(m: StepMetrics): string {
  return `${JSON.stringify(m, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}\n`;
}

/** A parsed line, with "NaN" / "Infinity" / "-Infinity" back as numbers. */
export function decodeMetrics(line: string): StepMetrics {
  const m = JSON.parse(line) as StepMetrics;
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string' && v in NON_FINITE) m[k] = NON_FINITE[v]!;
  return m;
}

export class MetricsLog {
  constructor(readonly file: string) {}

  /** One line; a write that fails part-way (a full disk) is cut off again, so the file keeps only whole lines. */
  async append(m: StepMetrics): Promise<void> {
    const size = existsSync(this.file) ? (await stat(this.file)).size : 0;
    try {
      await writing(this.file, () => appendFile(this.file, encodeMetrics(m)));
    } catch (err) {
      // Shrinking needs no space. Best effort: a file that cannot be shrunk is repaired by the resume.
      await truncate(this.file, size).catch(() => undefined);
      throw err;
    }
  }

  /** The complete lines of the file as written (a line cut by a kill, and all after it, excluded). */
  async lines(): Promise<string[]> {
    if (!existsSync(this.file)) return [];
    const out: string[] = [];
    const text = await readFile(this.file, 'utf8');
    const parts = text.split('\n');
    // The last part follows the final newline: empty, or a line whose write was cut short.
    for (const line of parts.slice(0, -1)) {
      if (!line.trim()) continue;
      try {
        JSON.parse(line);
      } catch {
        break; // a damaged line: nothing after it is trusted
      }
      out.push(`${line}\n`);
    }
    return out;
  }

  /** Keeps the first `lines` complete lines (what a checkpoint covers); drops the rest, partial lines included. */
  async truncate(lines: number): Promise<void> {
    await this.replace((await this.lines()).slice(0, lines).join(''));
  }

  /** Replaces the whole file atomically. */
  async replace(text: string): Promise<void> {
    await writeFileAtomic(this.file, text);
  }

  async read(): Promise<StepMetrics[]> {
    return (await this.lines()).map(decodeMetrics);
  }
}
