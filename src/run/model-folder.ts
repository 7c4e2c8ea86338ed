// A configuration's model folder (model.path, teacher.path) checked before anything reads it, so that
// a folder that is missing is said as such under the key the user wrote, rather than surfacing later
// as a tokenizer or weights error under another key.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/schema-dsl.ts';

/**
 * What is wrong with `path` as a Hugging Face model folder, or null when it is one (has config.json).
 * `folderOnly`: only that it is a folder (a tokenizer-only folder passes).
 */
export function modelFolderProblem(path: string, folderOnly = false): string | null {
  if (!existsSync(path)) return 'no such folder';
  if (!statSync(path).isDirectory()) return 'is a file, not a model folder';
  if (!folderOnly && !existsSync(join(path, 'config.json'))) return 'holds no config.json (a Hugging Face model folder is expected)';
  return null;
}

/** Throws `KEY: PATH: what is wrong` when `path` is not a model folder (`folderOnly`: not a folder). */
export function checkModelFolder(path: string, key: string, folderOnly = false): void {
  const problem = modelFolderProblem(path, folderOnly);
  if (problem) throw new ConfigError(`${key}: ${path}: ${problem}`);
}
