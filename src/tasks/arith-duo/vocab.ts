// The demo's character vocabulary: digits, the three operators and '=', and the letters of the two
// role names used in the agents' prompts. With the chat specials of CharTokenizer (8) the model's
// vocabulary is 31 tokens.
import { CharTokenizer } from '../../tokenizer/index.ts';

export const DEMO_ALPHABET = '0123456789+-*=PlanerSov';

export function demoTokenizer(): CharTokenizer {
  return new CharTokenizer(DEMO_ALPHABET);
}
