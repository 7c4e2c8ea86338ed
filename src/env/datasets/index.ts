// Dataset registry: one name per benchmark file the repository ships in data/ (data/PROVENANCE.md),
// plus the published layouts that users point at with a path. `loadDataset('math500')` reads the
// bundled copy (or the same file under MARFT_DATA_DIR); `loadDataset('deepcoder', { file })` reads a
// user's file in DeepCoder's layout.
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAimeMatharena, loadDeepScaler, loadGenericMath, loadGsm8k, loadMath500, loadOlympiadBench, loadPolaris, loadQwenEval } from './math-datasets.ts';
import { loadAppsSelected, loadCodeContests, loadDeepCoder, loadHumanEval, loadLiveCodeBench, loadMbpp } from './code-datasets.ts';
import type { LoadResult, Problem } from './types.ts';

export * from './types.ts';
export * from './split.ts';
export * from './math-datasets.ts';
export * from './code-datasets.ts';
export { loadJsonl, convertJsonlText } from './jsonl.ts';
export { parsePythonLiteral, tryParsePythonLiteral } from './python-literal.ts';

/** The environment variable naming a folder laid out like data/ that replaces it for every bundled dataset. */
export const DATA_DIR_ENV = 'MARFT_DATA_DIR';

/** The repository's own data/ folder, where the bundled benchmark files live. */
export function bundledDataDir(repoRoot = fileURLToPath(new URL('../../..', import.meta.url))): string {
  return resolve(repoRoot, 'data');
}

/** The folder bundled datasets are read from: MARFT_DATA_DIR when set (relative to the working directory), else data/. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env[DATA_DIR_ENV];
  return override ? resolve(override) : bundledDataDir();
}

interface DatasetEntry {
  domain: 'math' | 'code';
  /** Path under data/ (or MARFT_DATA_DIR), when the benchmark ships with the project. */
  bundledFile?: string;
  load(file: string): LoadResult<Problem>;
  describe: string;
}

export const DATASETS: Record<string, DatasetEntry> = {
  gsm8k: { domain: 'math', bundledFile: 'gsm8k/test.jsonl', load: (f) => loadGsm8k(f), describe: 'GSM8K test (1,319); {question, answer ending "#### N"}' },
  'gsm8k-train': { domain: 'math', bundledFile: 'gsm8k/train.jsonl', load: (f) => loadGsm8k(f, 'gsm8k-train'), describe: 'GSM8K train (7,473)' },
  'gsm8k-socratic': { domain: 'math', bundledFile: 'gsm8k/test_socratic.jsonl', load: (f) => loadGsm8k(f, 'gsm8k-socratic'), describe: 'GSM8K socratic test (1,319)' },
  math500: { domain: 'math', bundledFile: 'math500/test.jsonl', load: loadMath500, describe: 'MATH-500 (PRM800K test split)' },
  aime2024: { domain: 'math', bundledFile: 'aime/aime_2024_matharena.jsonl', load: (f) => loadAimeMatharena(f, 'aime2024'), describe: 'AIME 2024 I+II (matharena layout)' },
  aime2025: { domain: 'math', bundledFile: 'aime/aime_2025_matharena.jsonl', load: (f) => loadAimeMatharena(f, 'aime2025'), describe: 'AIME 2025 I+II (matharena layout)' },
  'aime2024-qwen': { domain: 'math', bundledFile: 'aime/aime24_qwen25math.jsonl', load: (f) => loadQwenEval(f, 'aime2024-qwen'), describe: 'AIME 2024 (Qwen2.5-Math evaluation layout)' },
  amc23: { domain: 'math', bundledFile: 'amc23/test.jsonl', load: (f) => loadQwenEval(f, 'amc23'), describe: 'AMC 2023 (40)' },
  olympiadbench: { domain: 'math', bundledFile: 'olympiadbench/OE_TO_maths_en_COMP.jsonl', load: loadOlympiadBench, describe: 'OlympiadBench OE_TO_maths_en_COMP (675)' },
  deepscaler: { domain: 'math', load: loadDeepScaler, describe: 'DeepScaleR-Preview layout {problem, answer, solution}' },
  polaris: { domain: 'math', load: loadPolaris, describe: 'Polaris-53K layout {problem, answer, difficulty}' },
  'math-jsonl': { domain: 'math', load: (f) => loadGenericMath(f, 'math-jsonl'), describe: 'any {question|problem, answer | solution with \\boxed{}}' },
  humaneval: { domain: 'code', bundledFile: 'humaneval/HumanEval.jsonl', load: loadHumanEval, describe: 'HumanEval (164), assertion tests' },
  mbpp: { domain: 'code', bundledFile: 'mbpp/mbpp.jsonl', load: loadMbpp, describe: 'MBPP (974), assertion tests' },
  apps: { domain: 'code', bundledFile: 'apps/selected150_mapcoder.jsonl', load: loadAppsSelected, describe: 'APPS selected150 (52 stdin/stdout + 98 call-based)' },
  livecodebench: { domain: 'code', load: loadLiveCodeBench, describe: 'LiveCodeBench code_generation_lite layout' },
  deepcoder: { domain: 'code', load: loadDeepCoder, describe: 'DeepCoder-Preview layout (lcbv5, primeintellect, taco, codeforces subsets)' },
  codecontests: { domain: 'code', load: (f) => loadCodeContests(f), describe: 'CodeContests layout (public + private tests)' },
};

/**
 * Loads a registered dataset from `file` when given (required for the published layouts), else its
 * bundled file under `dataDir` (default: MARFT_DATA_DIR, else the repository's data/).
 */
export function loadDataset(name: string, opts: { file?: string; dataDir?: string } = {}): LoadResult<Problem> {
  const entry = DATASETS[name];
  if (!entry) throw new Error(`unknown dataset "${name}" (known: ${Object.keys(DATASETS).join(', ')})`);
  if (opts.file) {
    if (!existsSync(opts.file)) throw new Error(`dataset file not found: ${opts.file}`);
    return entry.load(opts.file);
  }
  if (!entry.bundledFile) throw new Error(`dataset "${name}" has no bundled copy: pass the path of a file in its layout`);
  const dir = opts.dataDir ?? dataDir();
  const file = resolve(dir, entry.bundledFile);
  if (!existsSync(file)) {
    const why = opts.dataDir === undefined && process.env[DATA_DIR_ENV] ? ` (${DATA_DIR_ENV} is set to ${JSON.stringify(process.env[DATA_DIR_ENV])})` : '';
    throw new Error(`dataset file not found: ${file}${why}`);
  }
  return entry.load(file);
}
