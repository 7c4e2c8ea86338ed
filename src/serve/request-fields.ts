// The fields /v1/completions and /v1/chat/completions share, read from a request body and checked: each
// mistake is a 400 naming the field. OpenAI's fields (temperature, top_p, n, max_tokens, stop, seed,
// stream, stream_options) and the extensions vLLM's server has and the project's OpenAI engine sends
// (top_k, stop_token_ids, ignore_eos, include_stop_str_in_output, return_token_ids,
// return_tokens_as_token_ids; min_p, repetition_penalty / repeat_penalty at their neutral values).
// Fields that would change the result in a way the engine does not implement (penalties, logit bias,
// beam search, tools) are refused rather than ignored; fields this server has no use for (user,
// skip_special_tokens, ...) are ignored, as OpenAI-compatible servers do.
import { invalidParam, unsupportedParam } from './api-error.ts';

export type Body = Record<string, unknown>;

/** A number field in [lo, hi] (an integer when `integer`), `fallback` when absent or null. */
export function numberField(body: Body, key: string, fallback: number, lo: number, hi: number, integer = false): number {
  const v = body[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidParam(key, `expected a number, got ${JSON.stringify(v)}`, 'invalid_type');
  if (integer && !Number.isInteger(v)) throw invalidParam(key, `expected an integer, got ${v}`, 'invalid_type');
  if (v < lo || v > hi) throw invalidParam(key, `${v} is out of range [${lo}, ${hi}]`);
  return v;
}

/** An integer field, null when absent or null. */
export function optionalInt(body: Body, key: string, lo: number, hi: number): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  return numberField(body, key, 0, lo, hi, true);
}

export function boolField(body: Body, key: string, fallback: boolean): boolean {
  const v = body[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw invalidParam(key, `expected true or false, got ${JSON.stringify(v)}`, 'invalid_type');
  return v;
}

/** Token ids: integers in [0, vocabSize). */
export function tokenIds(v: unknown, key: string, vocabSize: number): number[] {
  if (!Array.isArray(v)) throw invalidParam(key, `expected an array of token ids, got ${JSON.stringify(v)?.slice(0, 80)}`, 'invalid_type');
  for (const t of v) {
    if (!Number.isInteger(t) || (t as number) < 0 || (t as number) >= vocabSize) throw invalidParam(key, `token ${JSON.stringify(t)} is not an id in [0, ${vocabSize})`);
  }
  return v as number[];
}

export interface GenerationFields {
  temperature: number;
  topP: number;
  /** 0 = off (the request's -1 or 0). */
  topK: number;
  /** null: not given (the endpoint's default applies). */
  maxTokens: number | null;
  n: number;
  /** null: the server picks (requests without a seed may share engine calls). */
  seed: number | null;
  stop: string[];
  stopTokenIds: number[];
  ignoreEos: boolean;
  includeStopStr: boolean;
  stream: boolean;
  includeUsage: boolean;
  returnTokenIds: boolean;
  tokensAsIds: boolean;
}

export const MAX_N = 64;
const MAX_STOP = 16;

/** Fields OpenAI's API or vLLM's has, accepted only at the value that leaves sampling unchanged. */
function refuseNonNeutral(body: Body, n: number): void {
  const neutral: [string, unknown][] = [['min_p', 0], ['repetition_penalty', 1], ['repeat_penalty', 1], ['frequency_penalty', 0], ['presence_penalty', 0]];
  for (const [key, value] of neutral) {
    const v = body[key];
    if (v !== undefined && v !== null && v !== value) throw unsupportedParam(key, `only ${value} is supported (the engine samples with temperature, top_p and top_k alone)`);
  }
  const bias = body.logit_bias;
  if (bias !== undefined && bias !== null && (typeof bias !== 'object' || Object.keys(bias).length > 0)) throw unsupportedParam('logit_bias', 'logit biases are not supported');
  if (body.use_beam_search === true) throw unsupportedParam('use_beam_search', 'beam search is not supported');
  const bestOf = body.best_of;
  if (bestOf !== undefined && bestOf !== null && bestOf !== n) throw unsupportedParam('best_of', `only best_of = n (${n}) is supported`);
  for (const key of ['tools', 'functions']) {
    const v = body[key];
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) throw unsupportedParam(key, 'tool calls are not supported');
  }
  const format = body.response_format as { type?: unknown } | undefined | null;
  if (format !== undefined && format !== null && format.type !== 'text') throw unsupportedParam('response_format', 'only {"type": "text"} is supported');
}

function stopField(body: Body): string[] {
  const v = body.stop;
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) throw invalidParam('stop', 'expected a string or an array of strings', 'invalid_type');
  if (list.length > MAX_STOP) throw invalidParam('stop', `at most ${MAX_STOP} stop sequences, got ${list.length}`);
  return (list as string[]).filter((s) => s.length > 0);
}

/** The sampling fields of a body; `maxTokensKeys` in order of precedence (chat: max_completion_tokens, then max_tokens). */
export function generationFields(body: Body, maxTokensKeys: readonly string[], vocabSize: number): GenerationFields {
  const n = numberField(body, 'n', 1, 1, MAX_N, true);
  refuseNonNeutral(body, n);
  const topK = numberField(body, 'top_k', 0, -1, vocabSize, true);
  let maxTokens: number | null = null;
  for (const key of maxTokensKeys) {
    const m = optionalInt(body, key, 1, Number.MAX_SAFE_INTEGER);
    if (m !== null) {
      maxTokens = m;
      break;
    }
  }
  const options = body.stream_options;
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) throw invalidParam('stream_options', 'expected an object', 'invalid_type');
  const stream = boolField(body, 'stream', false);
  const includeUsage = options ? boolField(options as Body, 'include_usage', false) : false;
  const topP = numberField(body, 'top_p', 1, 0, 1);
  if (topP === 0) throw invalidParam('top_p', 'must be greater than 0 (and at most 1)');
  return {
    temperature: numberField(body, 'temperature', 1, 0, 100),
    topP,
    topK: topK < 0 ? 0 : topK,
    maxTokens,
    n,
    seed: optionalInt(body, 'seed', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    stop: stopField(body),
    stopTokenIds: body.stop_token_ids === undefined || body.stop_token_ids === null ? [] : tokenIds(body.stop_token_ids, 'stop_token_ids', vocabSize),
    ignoreEos: boolField(body, 'ignore_eos', false),
    includeStopStr: boolField(body, 'include_stop_str_in_output', false),
    stream,
    includeUsage,
    returnTokenIds: boolField(body, 'return_token_ids', false),
    tokensAsIds: boolField(body, 'return_tokens_as_token_ids', false),
  };
}
