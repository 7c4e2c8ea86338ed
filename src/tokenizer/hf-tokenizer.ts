// A Hugging Face tokenizer folder (tokenizer.json + tokenizer_config.json) behind marft's Tokenizer.
//
// Encoding/decoding goes through @huggingface/tokenizers; chat rendering through @huggingface/jinja
// with the same variables transformers passes to apply_chat_template (messages,
// add_generation_prompt, the special tokens by name). The template is read from chat_template.jinja
// (where transformers >= 4.43 saves it; it wins over the config's, as in transformers), else
// tokenizer_config.json's chat_template, else chat_template.json (the processors' older file).
// eosTokenIds: generation_config.json's eos_token_id (a number or a list) together with
// tokenizer_config.json's eos_token.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HfTokenizerCore } from '@huggingface/tokenizers';
import { Template } from '@huggingface/jinja';
import type { ChatMessage, Tokenizer } from './types.ts';

/** Thrown when a model folder has no usable tokenizer: the model can still be driven with token ids. */
export class MissingTokenizerError extends Error {
  override name = 'MissingTokenizerError';
}

type SpecialTokenValue = string | { content: string } | null | undefined;

function tokenContent(v: SpecialTokenValue): string | undefined {
  if (v === null || v === undefined) return undefined;
  return typeof v === 'string' ? v : v.content;
}

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenIds: number[];
  /** The Jinja source of the chat template, or undefined when the folder has none. */
  readonly chatTemplate: string | undefined;
  private readonly core: HfTokenizerCore;
  private readonly template: Template | undefined;
  /** Special tokens passed to the template by name (bos_token, eos_token, ...), as transformers does. */
  private readonly templateSpecials: Record<string, string>;
  private readonly templateVariables: Record<string, unknown>;

  private constructor(
    core: HfTokenizerCore,
    tokenizerJson: Record<string, unknown>,
    config: Record<string, unknown>,
    chatTemplate: string | undefined,
    generationEos: number[],
    templateVariables: Record<string, unknown>,
  ) {
    this.core = core;
    this.templateVariables = templateVariables;
    this.chatTemplate = chatTemplate;
    this.template = chatTemplate === undefined ? undefined : new Template(chatTemplate);
    this.templateSpecials = {};
    for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token', 'sep_token', 'cls_token', 'mask_token']) {
      const content = tokenContent(config[key] as SpecialTokenValue);
      if (content !== undefined) this.templateSpecials[key] = content;
    }

    // len(tokenizer) in transformers: one past the largest id of the model vocabulary and the added tokens.
    let maxId = -1;
    const vocab = (tokenizerJson.model as { vocab?: unknown } | undefined)?.vocab;
    if (vocab && !Array.isArray(vocab)) for (const id of Object.values(vocab as Record<string, number>)) maxId = Math.max(maxId, id);
    else if (Array.isArray(vocab)) maxId = vocab.length - 1; // Unigram: [piece, score][]
    for (const t of (tokenizerJson.added_tokens as { id: number }[] | undefined) ?? []) maxId = Math.max(maxId, t.id);
    this.vocabSize = maxId + 1;

    const eos = new Set<number>(generationEos);
    const eosToken = this.templateSpecials.eos_token;
    if (eosToken !== undefined) {
      const id = core.token_to_id(eosToken);
      if (id !== undefined) eos.add(id);
    }
    this.eosTokenIds = [...eos];
  }

  /**
   * Loads dir/tokenizer.json (required), dir/tokenizer_config.json and dir/generation_config.json (optional).
   * templateVariables: extra chat-template variables, e.g. { enable_thinking: false } for Qwen3's no-thinking mode.
   */
  static fromDir(dir: string, options: { templateVariables?: Record<string, unknown> } = {}): HfTokenizer {
    const tokenizerFile = join(dir, 'tokenizer.json');
    if (!existsSync(tokenizerFile)) {
      throw new MissingTokenizerError(
        `no tokenizer.json in ${dir}: text cannot be encoded or decoded and no chat template can be rendered; only token ids can be used with this model`,
      );
    }
    const tokenizerJson = readJson(tokenizerFile);
    const configFile = join(dir, 'tokenizer_config.json');
    const config = existsSync(configFile) ? readJson(configFile) : {};

    // chat_template.jinja first: transformers lets the file override tokenizer_config.json's template.
    const jinjaFile = join(dir, 'chat_template.jinja');
    const templateJsonFile = join(dir, 'chat_template.json');
    let chatTemplate = existsSync(jinjaFile) ? readFileSync(jinjaFile, 'utf8') : undefined;
    if (chatTemplate === undefined && typeof config.chat_template === 'string') chatTemplate = config.chat_template;
    if (chatTemplate === undefined && Array.isArray(config.chat_template)) {
      // [{name, template}]: transformers uses the one named "default".
      const named = config.chat_template as { name: string; template: string }[];
      chatTemplate = (named.find((t) => t.name === 'default') ?? named[0])?.template;
    }
    if (chatTemplate === undefined && existsSync(templateJsonFile)) {
      const t = readJson(templateJsonFile).chat_template;
      if (typeof t === 'string') chatTemplate = t;
    }

    const generationEos: number[] = [];
    const genFile = join(dir, 'generation_config.json');
    if (existsSync(genFile)) {
      const e = readJson(genFile).eos_token_id;
      if (typeof e === 'number') generationEos.push(e);
      else if (Array.isArray(e)) generationEos.push(...e.filter((x): x is number => typeof x === 'number'));
    }

    let core: HfTokenizerCore;
    try {
      core = new HfTokenizerCore(tokenizerJson, config);
    } catch (e) {
      throw new Error(`cannot load ${tokenizerFile}: ${(e as Error).message}`);
    }
    return new HfTokenizer(core, tokenizerJson, config, chatTemplate, generationEos, options.templateVariables ?? {});
  }

  /** Encodes text as it is: no BOS/EOS added (what chat rendering and scripted replies need). */
  encode(text: string): number[] {
    return this.core.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * Special tokens are kept and no "tokenization space clean-up" is applied (it would rewrite
   * " ," to "," inside generated code), so decode(encode(s)) === s for byte-level BPE (Qwen);
   * SentencePiece-style decoders drop one leading space (docs/tokenizers.md).
   */
  decode(ids: number[]): string {
    // @huggingface/tokenizers refuses an empty list; an empty generation decodes to the empty text.
    if (ids.length === 0) return '';
    return this.core.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  tokenToId(token: string): number | undefined {
    return this.core.token_to_id(token);
  }

  renderChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): string {
    if (!this.template) {
      throw new Error('this tokenizer has no chat template (tokenizer_config.json chat_template or chat_template.jinja): chat prompts cannot be rendered');
    }
    return this.template.render({
      ...this.templateSpecials,
      ...this.templateVariables,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: options.addGenerationPrompt,
    });
  }

  encodeChat(messages: ChatMessage[], options: { addGenerationPrompt: boolean }): number[] {
    return this.encode(this.renderChat(messages, options));
  }
}
