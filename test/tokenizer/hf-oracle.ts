// What transformers' AutoTokenizer (and the tokenizers library reading tokenizer.json itself) gives for a
// tokenizer folder: runs test/tokenizer/hf_oracle.py in the oracle venv, one process per call.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '../../src/tokenizer/index.ts';
import { repoRoot, runPython } from '../python-oracle.ts';

const oracle = join(repoRoot, 'test/tokenizer/hf_oracle.py');

/** A chat the template refused (its raise_exception), in place of the text or ids. */
export interface TemplateError {
  error: string;
}

export interface Expectations {
  ids: number[][];
  decoded: string[];
  chat_text: [string | TemplateError, string | TemplateError][];
  chat_ids: [number[] | TemplateError, number[] | TemplateError][];
  eos_token_id: number;
  len: number;
  /** The tokenizers library's own reading of tokenizer.json (no transformers tokenizer class in between). */
  file_ids: number[][];
  file_decoded: string[];
  /** chat_text encoded by the tokenizers library. */
  file_chat_ids: [number[] | TemplateError, number[] | TemplateError][];
}

/** Folders the oracle can build (hf_oracle.py's MAKERS). */
export type FolderKind = 'qwen3' | 'qwen3-jinja' | 'qwen3-both' | 'llama-legacy' | 'llama-metaspace' | 'tinyllama';

/** One oracle process: optionally builds the folder in dir first, then one Expectations per template variant. */
export function expectations(
  dir: string,
  cases: { texts: string[]; chats: ChatMessage[][]; variants?: Record<string, unknown>[]; make_qwen?: boolean; make?: FolderKind },
): Expectations[] {
  const casesFile = join(tmpdir(), `marft-cases-${process.pid}-${Date.now()}.json`);
  writeFileSync(casesFile, JSON.stringify(cases));
  try {
    return JSON.parse(runPython([oracle, 'expect', dir, casesFile], { env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' } })) as Expectations[];
  } finally {
    rmSync(casesFile, { force: true });
  }
}

export function isTemplateError(x: unknown): x is TemplateError {
  return typeof x === 'object' && x !== null && 'error' in x;
}
