// What a sample reads as in a response: its text (the decoded tokens, without the final stop token,
// cut before a stop string unless include_stop_str_in_output), each token's own text for log-probs,
// OpenAI's finish_reason ("stop": a stop token or string; "length": max tokens or the context) and
// vLLM's stop_reason (the stop token id or string that ended it; null for the model's eos or a limit);
// and, for streaming, the text split into one piece per token that joins back to exactly that text.
import type { SampleResult } from '../engine/types.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

export interface ChoiceText {
  text: string;
  /** One per sampled token (the final stop token included): its text, or "token_id:N". */
  tokenTexts: string[];
  finishReason: 'stop' | 'length';
  stopReason: number | string | null;
}

export interface TextOptions {
  stop: readonly string[];
  includeStopStr: boolean;
  tokensAsIds: boolean;
  /** The model's end-of-sequence ids: a stop on one of them has stop_reason null, as in vLLM. */
  eosTokenIds: readonly number[];
}

/** The earliest stop string in `text` (the longest of those starting there), or null. */
function firstStop(text: string, stops: readonly string[]): { at: number; stop: string } | null {
  let best: { at: number; stop: string } | null = null;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (!best || at < best.at || (at === best.at && stop.length > best.stop.length))) best = { at, stop };
  }
  return best;
}

/** Each token's text alone; without a tokenizer (a task of token ids), its id. */
export function tokenText(id: number, tokenizer: Tokenizer | null, asId: boolean): string {
  return asId || !tokenizer ? `token_id:${id}` : tokenizer.decode([id]);
}

export function choiceText(r: SampleResult, tokenizer: Tokenizer | null, o: TextOptions): ChoiceText {
  const tokenTexts = r.tokens.map((t) => tokenText(t, tokenizer, o.tokensAsIds));
  const last = r.tokens[r.tokens.length - 1];
  const finishReason = r.stopReason === 'stop_token' || r.stopReason === 'stop_string' ? 'stop' : 'length';
  let stopReason: number | string | null = null;
  let text = '';
  if (r.stopReason === 'stop_string') {
    const full = tokenizer ? tokenizer.decode(r.tokens) : '';
    const hit = firstStop(full, o.stop);
    text = hit ? full.slice(0, o.includeStopStr ? hit.at + hit.stop.length : hit.at) : full;
    stopReason = hit?.stop ?? null;
  } else if (r.stopReason === 'stop_token') {
    text = tokenizer ? tokenizer.decode(o.includeStopStr ? r.tokens : r.tokens.slice(0, -1)) : '';
    stopReason = last !== undefined && !o.eosTokenIds.includes(last) ? last : null;
  } else {
    text = tokenizer ? tokenizer.decode(r.tokens) : '';
  }
  return { text, tokenTexts, finishReason, stopReason };
}

/**
 * `text` in one piece per token of `tokens` (the tokens it was decoded from, perhaps with a stop token
 * or a stop string's tail beyond it): piece k is what decoding the first k + 1 tokens adds, held back
 * while a character is incomplete (a byte-level token ending inside a UTF-8 sequence decodes to U+FFFD)
 * and clipped to `text`; whatever is left goes with the last piece, so the pieces always join to `text`.
 */
export function textPieces(tokens: readonly number[], tokenizer: Tokenizer | null, text: string): string[] {
  const pieces: string[] = [];
  let emitted = 0;
  for (let k = 0; k < tokens.length; k++) {
    let piece = '';
    if (tokenizer && k < tokens.length - 1) {
      const prefix = tokenizer.decode(tokens.slice(0, k + 1));
      const end = Math.min(prefix.length, text.length);
      if (end > emitted && !prefix.endsWith('\uFFFD') && text.startsWith(prefix.slice(0, end))) {
        piece = text.slice(emitted, end);
        emitted = end;
      }
    } else if (k === tokens.length - 1) {
      piece = text.slice(emitted);
      emitted = text.length;
    }
    pieces.push(piece);
  }
  return pieces;
}

/** Each token's offset in `text` (legacy completions' text_offset): where decoding the tokens before it ends, clipped to the text. */
export function textOffsets(tokens: readonly number[], tokenizer: Tokenizer | null, text: string): number[] {
  return tokens.map((_, k) => (tokenizer && k > 0 ? Math.min(tokenizer.decode(tokens.slice(0, k)).length, text.length) : 0));
}
