// Where a workflow task's problems come from: a dataset of src/env/datasets (a registered name, its
// bundled copy in data/ or MARFT_DATA_DIR, or a file in its layout), split deterministically into
// training and held-out problems, and the problems of one training step drawn from that step's seed
// only.
//
// Held-out problems never reach a training step: with a split, each problem's side depends only on
// (splitSeed, id) (src/env/datasets/split.ts); with a separate held-out dataset, training problems
// whose text equals a held-out problem's are dropped.
import { resolve } from 'node:path';
import { DATASETS, loadDataset, seededShuffle, splitProblems, type LoadError, type Problem } from '../env/datasets/index.ts';
import { codeFirstMessage } from '../env/code-env.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { TaskOptionError } from './options.ts';
import { didYouMean } from '../core/did-you-mean.ts';

/** Short names used in papers and configs, mapped to the registry's names. */
export const DATASET_ALIASES: Readonly<Record<string, string>> = { aime24: 'aime2024', aime25: 'aime2025', 'math-500': 'math500' };

export interface DatasetChoice {
  /** A name of DATASETS (or an alias). */
  name: string;
  /** A file in the dataset's layout instead of its bundled copy (relative paths: from the working directory). */
  file?: string;
}

export interface SplitChoice {
  /** Fraction of `dataset` held out when no held-out dataset is named. */
  heldOutFraction: number;
  splitSeed: number;
  /** Held-out problems from another dataset (then all of `dataset` trains). */
  heldOut?: DatasetChoice;
  /** Drop problems whose statement is longer than this many tokens (0 = keep all). */
  maxProblemTokens: number;
}

export interface ProblemSets {
  domain: 'math' | 'code';
  train: Problem[];
  /** In a seeded order, so that evaluating the first n is a uniform sample. */
  heldOut: Problem[];
  /** Malformed records skipped while loading (the rest of the file still loads). */
  loadErrors: LoadError[];
  /** Problems dropped by maxProblemTokens or as duplicates of held-out problems. */
  dropped: number;
}

export function datasetName(name: string, key: string): string {
  const resolved = DATASET_ALIASES[name] ?? name;
  if (!DATASETS[resolved]) {
    const known = [...Object.keys(DATASETS), ...Object.keys(DATASET_ALIASES)];
    const hint = didYouMean(name, known, (d) => `'${d}'`);
    throw new TaskOptionError(`task.options.${key}: got ${JSON.stringify(name)}, expected one of ${known.map((d) => `'${d}'`).join(', ')}${hint ? `; ${hint}` : ''}`);
  }
  return resolved;
}

/** The text the first agent is shown for a problem (what maxProblemTokens measures). */
export function problemStatement(p: Problem): string {
  return p.domain === 'math' ? p.question : codeFirstMessage(p);
}

function load(choice: DatasetChoice, key: string): { problems: Problem[]; errors: LoadError[]; domain: 'math' | 'code' } {
  const name = datasetName(choice.name, key);
  const entry = DATASETS[name]!;
  if (!choice.file && !entry.bundledFile) throw new TaskOptionError(`task.options.${key}: dataset '${name}' has no bundled copy; give the path of a file in its layout as task.options.${key === 'dataset' ? 'file' : 'heldOutFile'}`);
  let result;
  try {
    result = loadDataset(name, choice.file ? { file: resolve(choice.file) } : {});
  } catch (err) {
    throw new TaskOptionError(`task.options.${key}: ${(err as Error).message}`);
  }
  if (result.problems.length === 0) {
    const why = result.errors[0] ? ` (first error: ${result.errors[0].file}:${result.errors[0].line}: ${result.errors[0].message})` : '';
    throw new TaskOptionError(`task.options.${key}: dataset '${name}' has no usable problems${why}`);
  }
  return { problems: result.problems, errors: result.errors, domain: entry.domain };
}

export function loadProblemSets(dataset: DatasetChoice, split: SplitChoice, tokenizer: Tokenizer): ProblemSets {
  const main = load(dataset, 'dataset');
  const loadErrors = [...main.errors];
  let train: Problem[];
  let heldOut: Problem[];
  let dropped = 0;
  if (split.heldOut) {
    const other = load(split.heldOut, 'heldOutDataset');
    if (other.domain !== main.domain) throw new TaskOptionError(`task.options.heldOutDataset: a ${other.domain} dataset cannot evaluate a task trained on ${main.domain} problems`);
    loadErrors.push(...other.errors);
    heldOut = other.problems;
    const heldOutTexts = new Set(heldOut.map(problemStatement));
    train = main.problems.filter((p) => !heldOutTexts.has(problemStatement(p)));
    dropped += main.problems.length - train.length;
  } else {
    const s = splitProblems(main.problems, { seed: split.splitSeed, testFraction: split.heldOutFraction });
    train = s.train;
    heldOut = s.test;
  }
  if (split.maxProblemTokens > 0) {
    const fits = (p: Problem) => tokenizer.encode(problemStatement(p)).length <= split.maxProblemTokens;
    const before = train.length + heldOut.length;
    train = train.filter(fits);
    heldOut = heldOut.filter(fits);
    dropped += before - train.length - heldOut.length;
  }
  if (train.length === 0) throw new TaskOptionError(`task.options: no training problems left (dataset '${dataset.name}', heldOutFraction ${split.heldOutFraction}, maxProblemTokens ${split.maxProblemTokens})`);
  if (heldOut.length === 0) throw new TaskOptionError(`task.options: no held-out problems left (raise heldOutFraction or maxProblemTokens, or name a heldOutDataset)`);
  return { domain: main.domain, train, heldOut: seededShuffle(heldOut, split.splitSeed), loadErrors, dropped };
}

/**
 * The `count` training problems of one step, from the step's seed only: a seeded shuffle of the
 * training set (without repeats inside a step unless count exceeds it, then it wraps around).
 */
export function stepProblems(train: readonly Problem[], count: number, seed: number): Problem[] {
  const order = seededShuffle([...train], seed);
  return Array.from({ length: count }, (_, i) => order[i % order.length]!);
}
