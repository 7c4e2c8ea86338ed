// RUN/evaluations.json: the held-out scores of a run before its first step and after its last
// (src/train/evaluate.ts), so that a resumed run still reports the score it started from (its
// untrained policies no longer exist to be scored again) and a finished run resumed again does not
// score its last checkpoint twice. Written atomically; a fresh run writes it anew.
//   { "before": { "step": 0, "score": 0.21, "perSeed": [...], "problems": 64 }, "after": { "step": 40, ... } }
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';

export const EVALUATIONS_FILE = 'evaluations.json';

export interface RecordedEvaluation {
  /** Steps completed when it was taken. */
  step: number;
  score: number;
  perSeed: number[];
  problems: number;
  /** passAtK[k − 1]: the mean unbiased pass@k over the problems, k = 1..eval.seeds (absent in records written before it was kept). */
  passAtK?: number[];
}

export interface EvaluationRecord {
  before: RecordedEvaluation | null;
  after: RecordedEvaluation | null;
}

const EMPTY: EvaluationRecord = { before: null, after: null };

function valid(e: unknown): e is RecordedEvaluation {
  const r = e as RecordedEvaluation;
  return typeof r === 'object' && r !== null && Number.isInteger(r.step) && typeof r.score === 'number' && Array.isArray(r.perSeed) && Number.isInteger(r.problems);
}

/** The run's record; an absent or unreadable file is an empty one (the scores are then taken again where they can be). */
export async function readEvaluations(runDir: string): Promise<EvaluationRecord> {
  const file = join(runDir, EVALUATIONS_FILE);
  if (!existsSync(file)) return { ...EMPTY };
  try {
    const raw = JSON.parse(await readFile(file, 'utf8')) as Partial<EvaluationRecord>;
    return { before: valid(raw.before) ? raw.before : null, after: valid(raw.after) ? raw.after : null };
  } catch {
    return { ...EMPTY };
  }
}

export async function writeEvaluations(runDir: string, record: EvaluationRecord): Promise<void> {
  await writeFileAtomic(join(runDir, EVALUATIONS_FILE), `${JSON.stringify(record, null, 2)}\n`);
}
