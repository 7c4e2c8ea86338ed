// POST /v1/chat/completions for "base" and each agent: the messages rendered by the model's chat
// template (the tokenizer of the run's model, the one the agents were trained with) with the
// generation prompt, n samples in OpenAI's chat.completion shape; `logprobs: true` gives each sampled
// token's log-prob (choices[].logprobs.content[].{token, logprob, bytes}; top_logprobs holds the
// sampled token alone: the engine reports no alternatives); streaming sends chat.completion.chunk
// events. The "team" model is answered by src/serve/team.ts.
import type { ServerResponse } from 'node:http';
import type { ChatMessage, Tokenizer } from '../tokenizer/types.ts';
import { ApiError, invalidParam } from './api-error.ts';
import { choiceText, textPieces, type ChoiceText } from './choice-text.ts';
import { sendJson } from './http-io.ts';
import type { ServedModel } from './models.ts';
import { boolField, generationFields, numberField, type Body } from './request-fields.ts';
import { batchHeaders, sampleChoices, usage, type ServeContext } from './sample-choices.ts';
import { SseStream } from './sse.ts';

const ROLES: Record<string, ChatMessage['role']> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };

/** The request's messages as the tokenizer's chat messages (developer messages as system ones, text parts joined). */
export function chatMessages(raw: unknown): ChatMessage[] {
  if (!Array.isArray(raw) || raw.length === 0) throw invalidParam('messages', 'expected a non-empty array of messages', raw === undefined ? 'missing_required_parameter' : 'invalid_type');
  return raw.map((m, i) => {
    const where = `messages[${i}]`;
    if (typeof m !== 'object' || m === null) throw invalidParam(where, 'expected an object with role and content', 'invalid_type');
    const { role, content } = m as { role?: unknown; content?: unknown };
    const mapped = typeof role === 'string' ? ROLES[role] : undefined;
    if (!mapped) throw invalidParam(`${where}.role`, `${JSON.stringify(role)} is not supported (system, developer, user, assistant)`);
    let text: string;
    if (typeof content === 'string') text = content;
    else if (Array.isArray(content) && content.every((p) => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string')) {
      text = content.map((p) => (p as { text: string }).text).join('');
    } else throw invalidParam(`${where}.content`, 'expected a string or an array of text parts', 'invalid_type');
    return { role: mapped, content: text };
  });
}

/** The rendered prompt's token ids. */
export function chatPrompt(messages: ChatMessage[], tokenizer: Tokenizer | null): number[] {
  if (!tokenizer) throw new ApiError(400, 'this model has no tokenizer, so chat messages cannot be rendered: use /v1/completions with token ids', 'invalid_request_error', 'messages', 'unsupported_parameter');
  try {
    return tokenizer.encodeChat(messages, { addGenerationPrompt: true });
  } catch (err) {
    throw new ApiError(400, `the chat template cannot render these messages: ${(err as Error).message.split('\n')[0]}`, 'invalid_request_error', 'messages', 'invalid_value');
  }
}

interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

function logprobEntries(t: ChoiceText, logprobs: number[], top: number): LogprobEntry[] {
  return t.tokenTexts.map((token, k) => {
    const entry = { token, logprob: logprobs[k]!, bytes: [...Buffer.from(token, 'utf8')] };
    return { ...entry, top_logprobs: top > 0 ? [entry] : [] };
  });
}

export async function chatCompletions(ctx: ServeContext, model: ServedModel, body: Body, res: ServerResponse): Promise<void> {
  const f = generationFields(body, ['max_completion_tokens', 'max_tokens'], ctx.info.vocabSize);
  const wantLogprobs = boolField(body, 'logprobs', false);
  const top = numberField(body, 'top_logprobs', 0, 0, 20, true);
  if (top > 0 && !wantLogprobs) throw invalidParam('top_logprobs', 'needs logprobs: true');
  const prompt = chatPrompt(chatMessages(body.messages), ctx.tokenizer);
  const sampled = await sampleChoices(ctx, model.target, [prompt], f, 'messages', (room) => room);
  const id = ctx.nextId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const texts = sampled.results.map((r) => choiceText(r, ctx.tokenizer, { stop: f.stop, includeStopStr: f.includeStopStr, tokensAsIds: f.tokensAsIds, eosTokenIds: ctx.eosTokenIds }));
  const headers = batchHeaders(sampled.batch);
  if (!f.stream) {
    sendJson(res, 200, {
      id, object: 'chat.completion', created, model: model.id,
      choices: sampled.results.map((r, index) => ({
        index,
        message: { role: 'assistant', content: texts[index]!.text },
        logprobs: wantLogprobs ? { content: logprobEntries(texts[index]!, r.logprobs, top) } : null,
        finish_reason: texts[index]!.finishReason,
        stop_reason: texts[index]!.stopReason,
        ...(f.returnTokenIds ? { token_ids: r.tokens } : {}),
      })),
      usage: usage([prompt], sampled.results),
      ...(f.returnTokenIds ? { prompt_token_ids: prompt } : {}),
    }, headers);
    return;
  }
  const stream = new SseStream(res, headers);
  const chunk = (choice: Record<string, unknown>): Record<string, unknown> => ({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [choice] });
  sampled.results.forEach((r, index) => {
    const t = texts[index]!;
    const entries = logprobEntries(t, r.logprobs, top);
    stream.send(chunk({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }));
    textPieces(r.tokens, ctx.tokenizer, t.text).forEach((content, k) => {
      stream.send(chunk({ index, delta: { content }, logprobs: wantLogprobs ? { content: [entries[k]] } : null, finish_reason: null, ...(f.returnTokenIds ? { token_ids: [r.tokens[k]] } : {}) }));
    });
    stream.send(chunk({ index, delta: {}, logprobs: null, finish_reason: t.finishReason, stop_reason: t.stopReason }));
  });
  if (f.includeUsage) stream.send({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [], usage: usage([prompt], sampled.results) });
  stream.done();
}
