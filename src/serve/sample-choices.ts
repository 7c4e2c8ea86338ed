// From prompts (token ids) and a request's sampling fields to its samples, through the batcher: the
// context is checked (a prompt that fills it, or max_tokens past it, is a 400 before anything is
// sampled), the model's eos ids are added to the stop tokens (unless ignore_eos), and each prompt is
// sampled n times (choice i·n + j is prompt i's j-th sample, as in vLLM's replies).
import type { ModelInfo, PolicyTarget, SampleParams, SampleResult } from '../engine/types.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { contextOverflow, invalidParam } from './api-error.ts';
import type { BatchInfo, SampleBatcher } from './batcher.ts';
import type { GenerationFields } from './request-fields.ts';

/** What every endpoint handler works with. */
export interface ServeContext {
  batcher: SampleBatcher;
  info: ModelInfo;
  /** Null for a task of token ids with no tokenizer: only token-id prompts, no text, no stop strings. */
  tokenizer: Tokenizer | null;
  /** The model's and the tokenizer's end-of-sequence ids. */
  eosTokenIds: number[];
  /** Response ids: chatcmpl-N, cmpl-N. */
  nextId(prefix: string): string;
}

export interface SampledChoices {
  /** prompts.length × n, prompt-major. */
  results: SampleResult[];
  batch: BatchInfo;
  maxTokens: number;
}

/**
 * `defaultMaxTokens(room)`: max_tokens when the request gives none, from the room the longest prompt
 * leaves in the context (chat: all of it; completions: OpenAI's 16 at most).
 */
export async function sampleChoices(ctx: ServeContext, target: PolicyTarget, prompts: number[][], f: GenerationFields, param: 'prompt' | 'messages', defaultMaxTokens: (room: number) => number): Promise<SampledChoices> {
  const context = ctx.info.contextLength;
  const longest = Math.max(...prompts.map((p) => p.length));
  for (const p of prompts) if (p.length === 0) throw invalidParam(param, 'the prompt is empty (at least one token is needed)');
  if (longest >= context) throw contextOverflow(param, context, longest, f.maxTokens);
  const maxTokens = f.maxTokens ?? defaultMaxTokens(context - longest);
  if (longest + maxTokens > context) throw contextOverflow(param, context, longest, maxTokens);
  if (f.stop.length > 0 && !ctx.tokenizer) throw invalidParam('stop', 'this model has no tokenizer, so text cannot be matched: stop with stop_token_ids', 'unsupported_parameter');
  const stopTokenIds = [...new Set([...f.stopTokenIds, ...(f.ignoreEos ? [] : ctx.eosTokenIds)])];
  const params: SampleParams = { temperature: f.temperature, topP: f.topP, topK: f.topK, maxNewTokens: maxTokens, stopTokenIds, stopStrings: f.stop, seed: f.seed ?? 0 };
  const expanded = prompts.flatMap((p) => Array.from({ length: f.n }, () => p));
  const { results, batch } = await ctx.batcher.sample(target, expanded, params, f.seed !== null && f.temperature > 0);
  return { results, batch, maxTokens };
}

/** The debug headers that say which engine call served a request (and so that concurrent requests were batched). */
export function batchHeaders(batch: BatchInfo): Record<string, string> {
  return { 'x-marft-engine-call': String(batch.call), 'x-marft-batch-requests': String(batch.requests), 'x-marft-batch-prompts': String(batch.prompts) };
}

/** Token counts as OpenAI reports them: each prompt once (whatever n), every sampled token. */
export function usage(prompts: number[][], results: SampleResult[]): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const prompt = prompts.reduce((s, p) => s + p.length, 0);
  const completion = results.reduce((s, r) => s + r.tokens.length, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
