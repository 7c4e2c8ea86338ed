// Public entry of the tokenizers: the interface, the character-level tokenizer and HF folders.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CharTokenizer } from './char-tokenizer.ts';
import { HfTokenizer } from './hf-tokenizer.ts';
import type { Tokenizer } from './types.ts';

export type { ChatMessage, Tokenizer } from './types.ts';
export { CharTokenizer, CHAR_CHAT_TEMPLATE, DEFAULT_ALPHABET, SPECIAL_TOKENS } from './char-tokenizer.ts';
export { HfTokenizer, MissingTokenizerError } from './hf-tokenizer.ts';

/**
 * Loads the tokenizer of a model folder: a CharTokenizer when tokenizer_config.json says
 * "marft_tokenizer": "char" (the fast, exact path for marft's own tiny models), else HfTokenizer.
 */
export function loadTokenizer(dir: string): Tokenizer {
  const configFile = join(dir, 'tokenizer_config.json');
  if (existsSync(configFile)) {
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { marft_tokenizer?: string };
    if (config.marft_tokenizer === 'char') return CharTokenizer.load(dir);
  }
  return HfTokenizer.fromDir(dir);
}
