// Loaders for the maths benchmarks in data/ and for the published JSONL layouts of
// DeepScaleR and Polaris (issue 3 item 3). Field names are those of the source files (see
// data/PROVENANCE.md and docs/datasets.md).
import { extractAfterHashes, extractBoxed } from '../../verify/math/index.ts';
import { DATASET_BENCHMARKS } from '../../verify/math/benchmarks/index.ts';
import { answerField, loadJsonl, optStr, recordId, str, type Row } from './jsonl.ts';
import { RecordError, type LoadResult, type MathProblem } from './types.ts';

/** The benchmark scorer a dataset's problems are judged by ({} for the training sets judged by marft's comparison). */
function benchmarkOf(dataset: string): { benchmark?: string } {
  const b = Object.hasOwn(DATASET_BENCHMARKS, dataset) ? DATASET_BENCHMARKS[dataset] : undefined;
  return b === undefined ? {} : { benchmark: b };
}

function meta(row: Row, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (row[k] !== undefined && row[k] !== null) out[k] = row[k];
  return out;
}

/** GSM8K: {question, answer} where answer is a worked solution ending "#### N". */
export function gsm8kRow(row: Row, line: number, dataset = 'gsm8k'): MathProblem {
  const solution = str(row, 'answer');
  const final = extractAfterHashes(solution);
  if (final === null) throw new RecordError('field "answer" has no "#### <final answer>" line');
  return { domain: 'math', id: `${dataset}/${line}`, dataset, question: str(row, 'question'), answer: final.replace(/,/g, ''), ...benchmarkOf(dataset), solution, meta: {} };
}

/** MATH-500 (PRM800K split): {problem, solution, answer, subject, level, unique_id}. */
export function math500Row(row: Row, line: number): MathProblem {
  const p: MathProblem = {
    domain: 'math',
    id: recordId(row, ['unique_id'], 'math500', line),
    dataset: 'math500',
    question: str(row, 'problem'),
    answer: answerField(row, 'answer'),
    ...benchmarkOf('math500'),
    meta: meta(row, ['subject', 'level']),
  };
  const solution = optStr(row, 'solution');
  if (solution !== undefined) p.solution = solution;
  return p;
}

/** AIME, matharena layout (built): {id, competition, problem_idx, problem, answer: integer}. */
export function aimeMatharenaRow(row: Row, line: number, dataset: string): MathProblem {
  return { domain: 'math', id: recordId(row, ['id'], dataset, line), dataset, question: str(row, 'problem'), answer: answerField(row, 'answer'), ...benchmarkOf(dataset), meta: meta(row, ['competition', 'problem_idx']) };
}

/**
 * Qwen2.5-Math evaluation layout (AIME 2024, AMC23): {id, problem | question, answer, solution?, url?}.
 * AMC23 stores answers as floats (27.0); they are written back as the shortest decimal ("27").
 */
export function qwenEvalRow(row: Row, line: number, dataset: string): MathProblem {
  const question = typeof row['problem'] === 'string' && row['problem'] !== '' ? str(row, 'problem') : str(row, 'question');
  const p: MathProblem = { domain: 'math', id: `${dataset}/${recordId(row, ['id'], dataset, line)}`, dataset, question, answer: answerField(row, 'answer'), ...benchmarkOf(dataset), meta: meta(row, ['url']) };
  const solution = optStr(row, 'solution');
  if (solution !== undefined) p.solution = solution;
  return p;
}

/**
 * OlympiadBench (open-ended, text-only): {id, question, context?, final_answer: [..], answer_type,
 * unit, is_multiple_answer, solution: [..]}. The answer is the list's items joined with ", " and
 * without $ delimiters; the unit (e.g. "^{\circ}"), the answer type and the per-problem tolerance
 * `error` (e.g. "1e-1", which OlympiadBench's scorer grades with) are kept in meta.
 */
export function olympiadBenchRow(row: Row, line: number): MathProblem {
  const finals = row['final_answer'];
  if (!Array.isArray(finals) || finals.length === 0 || !finals.every((f) => typeof f === 'string' && f.trim() !== '')) {
    throw new RecordError('field "final_answer" must be a non-empty list of strings');
  }
  const answer = (finals as string[])
    .flatMap((f) => f.split(/\$\s*,\s*\$/))
    .map((f) => f.trim().replace(/^\$|\$\.?$|\.$/g, '').trim())
    .join(', ');
  const context = optStr(row, 'context');
  const question = context ? `${context}\n\n${str(row, 'question')}` : str(row, 'question');
  const p: MathProblem = {
    domain: 'math',
    id: `olympiadbench/${recordId(row, ['id'], 'olympiadbench', line)}`,
    dataset: 'olympiadbench',
    question,
    answer,
    ...benchmarkOf('olympiadbench'),
    meta: meta(row, ['subfield', 'answer_type', 'unit', 'is_multiple_answer', 'error']),
  };
  const solutions = row['solution'];
  if (Array.isArray(solutions) && typeof solutions[0] === 'string') p.solution = solutions[0];
  return p;
}

/** DeepScaleR-Preview (agentica-org): {problem, answer, solution}. */
export function deepscalerRow(row: Row, line: number): MathProblem {
  const p: MathProblem = { domain: 'math', id: `deepscaler/${line}`, dataset: 'deepscaler', question: str(row, 'problem'), answer: answerField(row, 'answer'), ...benchmarkOf('deepscaler'), meta: {} };
  const solution = optStr(row, 'solution');
  if (solution !== undefined) p.solution = solution;
  return p;
}

/** Polaris-Dataset-53K: {problem, answer, difficulty ("k/8": how many of 8 samples a reference model solved)}. */
export function polarisRow(row: Row, line: number): MathProblem {
  return { domain: 'math', id: `polaris/${line}`, dataset: 'polaris', question: str(row, 'problem'), answer: answerField(row, 'answer'), meta: meta(row, ['difficulty']) };
}

/** A generic {question|problem, answer|solution-with-\boxed} layout for user files. */
export function genericMathRow(row: Row, line: number, dataset: string): MathProblem {
  const question = typeof row['question'] === 'string' ? str(row, 'question') : str(row, 'problem');
  let answer: string;
  if (row['answer'] !== undefined) answer = answerField(row, 'answer');
  else {
    const boxed = extractBoxed(str(row, 'solution'));
    if (boxed === null) throw new RecordError('no "answer" field and no \\boxed{} answer in "solution"');
    answer = boxed;
  }
  return { domain: 'math', id: recordId(row, ['id', 'unique_id', 'task_id'], dataset, line), dataset, question, answer, meta: {} };
}

export const loadGsm8k = (file: string, dataset = 'gsm8k'): LoadResult<MathProblem> => loadJsonl(file, (r, l) => gsm8kRow(r, l, dataset));
export const loadMath500 = (file: string): LoadResult<MathProblem> => loadJsonl(file, math500Row);
export const loadAimeMatharena = (file: string, dataset: string): LoadResult<MathProblem> => loadJsonl(file, (r, l) => aimeMatharenaRow(r, l, dataset));
export const loadQwenEval = (file: string, dataset: string): LoadResult<MathProblem> => loadJsonl(file, (r, l) => qwenEvalRow(r, l, dataset));
export const loadOlympiadBench = (file: string): LoadResult<MathProblem> => loadJsonl(file, olympiadBenchRow);
export const loadDeepScaler = (file: string): LoadResult<MathProblem> => loadJsonl(file, deepscalerRow);
export const loadPolaris = (file: string): LoadResult<MathProblem> => loadJsonl(file, polarisRow);
export const loadGenericMath = (file: string, dataset: string): LoadResult<MathProblem> => loadJsonl(file, (r, l) => genericMathRow(r, l, dataset));
