// POST /v1/completions: prompts as text (encoded as they are: no BOS or template is added) or as token
// ids (one list, or a list of lists: what the project's OpenAI engine sends), n samples each, in
// OpenAI's text_completion shape; `logprobs` (any count) gives each sampled token's log-prob
// (logprobs.tokens / token_logprobs / text_offset; top_logprobs holds the sampled token alone: the
// engine reports no alternatives); vLLM's `prompt_logprobs: 0` gives each prompt token's log-prob
// (choices[].prompt_logprobs, what the OpenAI engine's score reads), `return_token_ids` the ids.
import type { ServerResponse } from 'node:http';
import type { Tokenizer } from '../tokenizer/types.ts';
import { invalidParam, unsupportedParam } from './api-error.ts';
import { choiceText, textOffsets, textPieces, tokenText, type TextOptions } from './choice-text.ts';
import { sendJson } from './http-io.ts';
import type { ServedModel } from './models.ts';
import { generationFields, optionalInt, tokenIds, type Body } from './request-fields.ts';
import { batchHeaders, sampleChoices, usage, type ServeContext } from './sample-choices.ts';
import { SseStream } from './sse.ts';

/** OpenAI's default max_tokens for completions. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

function encodeText(text: string, tokenizer: Tokenizer | null): number[] {
  if (!tokenizer) throw invalidParam('prompt', 'this model has no tokenizer: send the prompt as token ids', 'unsupported_parameter');
  return tokenizer.encode(text);
}

/** The request's prompts as token-id lists. */
export function completionPrompts(prompt: unknown, ctx: ServeContext): number[][] {
  const vocab = ctx.info.vocabSize;
  if (typeof prompt === 'string') return [encodeText(prompt, ctx.tokenizer)];
  if (!Array.isArray(prompt) || prompt.length === 0) throw invalidParam('prompt', 'expected a string, an array of strings, an array of token ids or an array of token-id arrays (non-empty)', prompt === undefined ? 'missing_required_parameter' : 'invalid_type');
  if (prompt.every((p) => typeof p === 'number')) return [tokenIds(prompt, 'prompt', vocab)];
  return prompt.map((p) => {
    if (typeof p === 'string') return encodeText(p, ctx.tokenizer);
    return tokenIds(p, 'prompt', vocab);
  });
}

export async function completions(ctx: ServeContext, model: ServedModel, body: Body, res: ServerResponse): Promise<void> {
  if (body.echo === true) throw unsupportedParam('echo', 'echoing the prompt is not supported (prompt_logprobs gives its log-probs)');
  if (body.suffix !== undefined && body.suffix !== null) throw unsupportedParam('suffix', 'suffixes (fill-in-the-middle) are not supported');
  const f = generationFields(body, ['max_tokens'], ctx.info.vocabSize);
  const logprobs = optionalInt(body, 'logprobs', 0, 20);
  const promptLogprobs = optionalInt(body, 'prompt_logprobs', 0, 20);
  if (promptLogprobs !== null && promptLogprobs > 0) throw unsupportedParam('prompt_logprobs', 'only 0 (each prompt token\'s own log-prob) is supported: the engine reports no alternatives');
  const prompts = completionPrompts(body.prompt, ctx);
  const sampled = await sampleChoices(ctx, model.target, prompts, f, 'prompt', (room) => Math.min(COMPLETIONS_DEFAULT_MAX_TOKENS, room));
  const scored = promptLogprobs === null ? null : await ctx.batcher.score(model.target, prompts.map((tokens) => ({ tokens, scoreFrom: 1 })));
  const textOptions: TextOptions = { stop: f.stop, includeStopStr: f.includeStopStr, tokensAsIds: f.tokensAsIds, eosTokenIds: ctx.eosTokenIds };
  const id = ctx.nextId('cmpl');
  const created = Math.floor(Date.now() / 1000);
  const choices = sampled.results.map((r, index) => {
    const prompt = Math.floor(index / f.n);
    const t = choiceText(r, ctx.tokenizer, textOptions);
    return {
      index, r, t, prompt,
      // What the choice's last (or only) event carries besides its tokens.
      extra: {
        stop_reason: t.stopReason,
        ...(f.returnTokenIds ? { prompt_token_ids: prompts[prompt] } : {}),
        ...(scored ? { prompt_logprobs: promptLogprobsOf(prompts[prompt]!, scored[prompt]!, ctx.tokenizer, f.tokensAsIds) } : {}),
      },
    };
  });
  const headers = batchHeaders(sampled.batch);
  if (!f.stream) {
    sendJson(res, 200, {
      id, object: 'text_completion', created, model: model.id,
      choices: choices.map(({ index, r, t, extra }) => ({
        index, text: t.text,
        logprobs: logprobs === null ? null : {
          tokens: t.tokenTexts, token_logprobs: r.logprobs, top_logprobs: t.tokenTexts.map((tok, k) => ({ [tok]: r.logprobs[k]! })), text_offset: textOffsets(r.tokens, ctx.tokenizer, t.text),
        },
        finish_reason: t.finishReason, ...extra, ...(f.returnTokenIds ? { token_ids: r.tokens } : {}),
      })),
      usage: usage(prompts, sampled.results),
    }, headers);
    return;
  }
  const stream = new SseStream(res, headers);
  for (const { index, r, t, extra } of choices) {
    const pieces = textPieces(r.tokens, ctx.tokenizer, t.text);
    const offsets = textOffsets(r.tokens, ctx.tokenizer, t.text);
    r.tokens.forEach((token, k) => {
      const last = k === r.tokens.length - 1;
      stream.send({
        id, object: 'text_completion', created, model: model.id,
        choices: [{
          index, text: pieces[k],
          logprobs: logprobs === null ? null : { tokens: [t.tokenTexts[k]], token_logprobs: [r.logprobs[k]], top_logprobs: [{ [t.tokenTexts[k]!]: r.logprobs[k] }], text_offset: [offsets[k]] },
          finish_reason: last ? t.finishReason : null,
          ...(f.returnTokenIds ? { token_ids: [token] } : {}),
          ...(last ? extra : {}),
        }],
      });
    });
    if (r.tokens.length === 0) stream.send({ id, object: 'text_completion', created, model: model.id, choices: [{ index, text: '', logprobs: null, finish_reason: t.finishReason, ...extra }] });
  }
  if (f.includeUsage) stream.send({ id, object: 'text_completion', created, model: model.id, choices: [], usage: usage(prompts, sampled.results) });
  stream.done();
}

/** vLLM's prompt_logprobs: null for the first token (nothing before it), then {id: {logprob, decoded_token}} per token. */
function promptLogprobsOf(prompt: number[], scored: Float32Array, tokenizer: Tokenizer | null, asIds: boolean): (Record<string, { logprob: number; decoded_token: string }> | null)[] {
  return prompt.map((token, pos) => (pos === 0 ? null : { [String(token)]: { logprob: scored[pos - 1]!, decoded_token: tokenText(token, tokenizer, asIds) } }));
}
