// A character-level tokenizer for tiny models trained from scratch (the demo, learning tests).
//
// Ids: the special tokens first (SPECIAL_TOKENS order, ids 0..7), then one id per character of the
// alphabet in the order given. Characters outside the alphabet encode to <unk>. Special-token
// strings that occur in text (e.g. "<|end|>") encode to their special id, as in Hugging Face
// tokenizers, so renderChat + encode gives the chat ids.
//
// Chat format (no system message is added when none is given):
//   <|system|>S<|end|><|user|>U<|end|><|assistant|>A<|end|> ... [<|assistant|> when addGenerationPrompt]
// A model ends its reply with <|end|> (or <eos>); both are eosTokenIds.
//
// Saved as a Hugging Face tokenizer folder (tokenizer.json: a BPE model with no merges, no
// pre-tokenizer and a Fuse decoder, which is exactly character splitting; tokenizer_config.json
// with the same chat format as a Jinja chat_template), so HfTokenizer, transformers and vLLM
// read the demo's model folder with the same ids.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, Tokenizer } from './types.ts';

export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<eos>', '<unk>', '<|system|>', '<|user|>', '<|assistant|>', '<|end|>'] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Printable ASCII (space .. '~') and newline: enough for maths and Python. */
export const DEFAULT_ALPHABET = '\n' + Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

/** The chat format above as a Jinja template (what tokenizer_config.json stores). */
export const CHAR_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

/** The chat format above: each message as <|role|>content<|end|>, then <|assistant|> when a reply is wanted. */
export function renderSpecialChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): string {
  let out = '';
  for (const m of messages) out += `<|${m.role}|>${m.content}<|end|>`;
  return options.addGenerationPrompt ? out + '<|assistant|>' : out;
}

/** The id (index in SPECIAL_TOKENS) of the special token that starts at text[i], or −1. */
export function specialTokenAt(text: string, i: number): number {
  return text.charCodeAt(i) === 60 /* '<' */ ? SPECIAL_TOKENS.findIndex((s) => text.startsWith(s, i)) : -1;
}

/** The pieces of `ids` concatenated (pieces[id] is id's string); an id with no piece is a RangeError naming `tokenizer`. */
export function decodePieces(pieces: readonly string[], ids: number[], tokenizer: string): string {
  let out = '';
  for (const id of ids) {
    const piece = pieces[id];
    if (piece === undefined) throw new RangeError(`${tokenizer}: token id ${id} is outside the vocabulary (size ${pieces.length})`);
    out += piece;
  }
  return out;
}

export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenIds: number[];
  readonly alphabet: string[];
  private readonly idOfChar = new Map<string, number>();
  private readonly pieceOfId: string[];

  /** alphabet: the characters (code points) to give ids, in id order; duplicates are an error. */
  constructor(alphabet: string = DEFAULT_ALPHABET) {
    this.alphabet = Array.from(alphabet);
    this.pieceOfId = [...SPECIAL_TOKENS];
    for (const ch of this.alphabet) {
      if (this.idOfChar.has(ch)) throw new Error(`CharTokenizer: character ${JSON.stringify(ch)} appears twice in the alphabet`);
      this.idOfChar.set(ch, this.pieceOfId.length);
      this.pieceOfId.push(ch);
    }
    this.vocabSize = this.pieceOfId.length;
    this.eosTokenIds = [this.specialId('<|end|>'), this.specialId('<eos>')];
  }

  specialId(token: SpecialToken): number {
    return SPECIAL_TOKENS.indexOf(token);
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    const unk = this.specialId('<unk>');
    let i = 0;
    while (i < text.length) {
      const special = specialTokenAt(text, i);
      if (special >= 0) {
        ids.push(special);
        i += SPECIAL_TOKENS[special]!.length;
        continue;
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      ids.push(this.idOfChar.get(ch) ?? unk);
      i += ch.length;
    }
    return ids;
  }

  /** Special tokens decode to their strings, so decode(encode(s)) === s for text over the alphabet. */
  decode(ids: number[]): string {
    return decodePieces(this.pieceOfId, ids, 'CharTokenizer');
  }

  renderChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): string {
    return renderSpecialChat(messages, options);
  }

  encodeChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): number[] {
    return this.encode(this.renderChat(messages, options));
  }

  /** The Hugging Face tokenizer.json object. */
  toTokenizerJson(): Record<string, unknown> {
    const vocab: Record<string, number> = {};
    this.pieceOfId.forEach((piece, id) => (vocab[piece] = id));
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: SPECIAL_TOKENS.map((content, id) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: null,
      post_processor: null,
      decoder: { type: 'Fuse' },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: '<unk>',
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab,
        merges: [],
      },
    };
  }

  /** The Hugging Face tokenizer_config.json object (special tokens and the chat template). */
  toTokenizerConfig(): Record<string, unknown> {
    return {
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: '<bos>',
      eos_token: '<|end|>',
      pad_token: '<pad>',
      unk_token: '<unk>',
      clean_up_tokenization_spaces: false,
      chat_template: CHAR_CHAT_TEMPLATE,
      marft_tokenizer: 'char',
    };
  }

  /** Writes tokenizer.json and tokenizer_config.json into dir (created if needed). */
  save(dir: string): void {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(this.toTokenizerJson(), null, 2) + '\n');
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(this.toTokenizerConfig(), null, 2) + '\n');
  }

  /** Rebuilds a CharTokenizer from a tokenizer.json object written by toTokenizerJson. */
  static fromTokenizerJson(json: unknown, source = 'tokenizer.json'): CharTokenizer {
    const model = (json as { model?: { type?: string; vocab?: Record<string, number>; merges?: unknown[] } } | null)?.model;
    if (!model || model.type !== 'BPE' || !model.vocab || (model.merges && model.merges.length > 0)) {
      throw new Error(`${source} is not a character-level tokenizer written by CharTokenizer (expected a BPE model with no merges)`);
    }
    const pieces: string[] = [];
    for (const [piece, id] of Object.entries(model.vocab)) pieces[id] = piece;
    SPECIAL_TOKENS.forEach((s, id) => {
      if (pieces[id] !== s) throw new Error(`${source}: expected special token ${s} at id ${id}, found ${JSON.stringify(pieces[id])}`);
    });
    const alphabet = pieces.slice(SPECIAL_TOKENS.length);
    alphabet.forEach((ch, k) => {
      if (ch === undefined || Array.from(ch).length !== 1) {
        throw new Error(`${source}: id ${k + SPECIAL_TOKENS.length} is not a single character`);
      }
    });
    return new CharTokenizer(alphabet.join(''));
  }

  /** Loads a folder written by save(). */
  static load(dir: string): CharTokenizer {
    const file = join(dir, 'tokenizer.json');
    if (!existsSync(file)) throw new Error(`no tokenizer.json in ${dir}`);
    return CharTokenizer.fromTokenizerJson(JSON.parse(readFileSync(file, 'utf8')), file);
  }
}
