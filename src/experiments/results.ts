// OUT/results.jsonl: one line per (row, seed, column) evaluation, appended as soon as it exists and
// never recomputed. A line is the unit of progress: a kill can at worst cut the line being written,
// which is dropped (and cut off the file) when the experiment next reads it, so that evaluation runs again.
// Each line carries its format version (src/runs/format-version.ts): a line of a newer marft is refused
// in one line; a line without one (written before versions existed) is read as version 1.
import { appendFile, readFile, truncate } from 'node:fs/promises';
import { ExperimentError } from './experiment-error.ts';
import { FORMAT_VERSIONS, formatVersion } from '../runs/format-version.ts';
import { writing } from '../runs/write-errors.ts';

export interface ExperimentResult {
  row: string;
  seed: number;
  column: string;
  /** Mean of the per-eval-seed averages (src/train/evaluate.ts). */
  score: number;
  perSeed: number[];
  /** passAtK[k − 1]: the run's pass@k for k = 1..eval.seeds (absent in lines written before it existed). */
  passAtK?: number[];
  problems: number;
  /** The checkpoint's completed training steps; null for a prompt-only (base) row. */
  step: number | null;
  checkpoint: string | null;
}

export const resultKey = (row: string, seed: number, column: string): string => JSON.stringify([row, seed, column]);

function isResult(v: unknown): v is ExperimentResult {
  const r = v as ExperimentResult;
  return typeof r === 'object' && r !== null && typeof r.row === 'string' && typeof r.column === 'string' && Number.isInteger(r.seed) &&
    typeof r.score === 'number' && Array.isArray(r.perSeed) && typeof r.problems === 'number' && (r.passAtK === undefined || Array.isArray(r.passAtK));
}

/**
 * The results in FILE (none when it does not exist). A last line without its newline is a write cut
 * by a kill: it is removed from the file. Any other unreadable line is a damaged file: one line naming it.
 */
export async function readResults(file: string, repair = true): Promise<ExperimentResult[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ExperimentError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length && repair) await truncate(file, Buffer.byteLength(text.slice(0, end)));
  const lines = text.slice(0, end).split('\n').filter((l) => l.trim() !== '');
  return lines.map((line, i) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new ExperimentError(`${file}: line ${i + 1} is not JSON; remove it to evaluate that run again`);
    }
    if (!isResult(v)) throw new ExperimentError(`${file}: line ${i + 1} is not a result {row, seed, column, score, perSeed, problems, step, checkpoint}; remove it to evaluate that run again`);
    if (formatVersion(`${file} (line ${i + 1})`, 'marft-experiment-result', v) === null) throw new ExperimentError(`${file}: line ${i + 1} has no valid version; remove it to evaluate that run again`);
    const { version: _version, ...result } = v as ExperimentResult & { version?: number };
    return result;
  });
}

/** Appends one result as one line (a single write); a full disk or a read-only folder is one line. */
export async function appendResult(file: string, result: ExperimentResult): Promise<void> {
  const line = { ...result, version: FORMAT_VERSIONS['marft-experiment-result'] };
  await writing(file, () => appendFile(file, `${JSON.stringify(line)}\n`));
}
