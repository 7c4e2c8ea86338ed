// Builds `marft verify code` input lines from the HumanEval and MBPP files in data/.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { dataDir } from '../../src/env/datasets/index.ts';

export const DATA_DIR = dataDir();

interface HumanEvalRow {
  task_id: string;
  prompt: string;
  canonical_solution: string;
  test: string;
  entry_point: string;
}

interface MbppRow {
  task_id: number;
  code: string;
  test_setup_code: string;
  test_list: string[];
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

export function humanEvalRows(): HumanEvalRow[] {
  return readJsonl<HumanEvalRow>(resolve(DATA_DIR, 'humaneval/HumanEval.jsonl'));
}

export function mbppRows(): MbppRow[] {
  return readJsonl<MbppRow>(resolve(DATA_DIR, 'mbpp/mbpp.jsonl'));
}

/** HumanEval: prompt + body as the program, the problem's check() called on its entry point as the assertion script. */
export function humanEvalLine(row: HumanEvalRow, body: string = row.canonical_solution): string {
  return JSON.stringify({ id: row.task_id, program: row.prompt + body, assert: `${row.test}\ncheck(${row.entry_point})\n`, timeout_s: 20 });
}

/** A body that returns None: every HumanEval check must fail on it. */
export const NONE_STUB = '    return None\n';

/** MBPP: the reference code as the program; test_setup_code (which may use the program's classes) then the asserts. */
export function mbppLine(row: MbppRow): string {
  return JSON.stringify({ id: row.task_id, program: row.code, assert: `${row.test_setup_code}\n${row.test_list.join('\n')}\n`, timeout_s: 20 });
}
