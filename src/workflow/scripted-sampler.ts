// A sampler that plays a script instead of a model: for tests, examples and prompt-only debugging.
// It records every call (requests and params) so tests can check who saw what.
import type { SampleParams, SampleResult, StopReason } from '../engine/types.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import type { ActionSampler, SampleRequest } from './sampler.ts';

export interface ScriptedReply {
  /** Reply text, encoded with the tokenizer; one of text / tokens. */
  text?: string;
  /** Exact reply token ids (used as given). */
  tokens?: number[];
  /** Per-token behaviour log-probs; default -0.001·(k+1) for token k (distinct, so copies are checkable). */
  logprobs?: number[];
  /** Append the first stop token (params.stopTokenIds[0], else the tokenizer's first eos); default true. */
  appendStop?: boolean;
}

/** What the script is given: the request, its prompt decoded, and the call's position. */
export interface ScriptInput extends SampleRequest {
  promptText: string;
  /** Index of the sample() call (0-based) and of the request inside it. */
  call: number;
  row: number;
}

export type Script = (input: ScriptInput) => string | ScriptedReply;

export function defaultScriptedLogprob(k: number): number {
  return -0.001 * (k + 1);
}

export class ScriptedSampler implements ActionSampler {
  readonly calls: { requests: SampleRequest[]; params: SampleParams }[] = [];

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly script: Script,
  ) {}

  async sample(requests: SampleRequest[], params: SampleParams): Promise<SampleResult[]> {
    const call = this.calls.length;
    this.calls.push({ requests: requests.map((r) => ({ ...r, prompt: [...r.prompt] })), params: { ...params } });
    return requests.map((request, row) => {
      const raw = this.script({ ...request, promptText: this.tokenizer.decode(request.prompt), call, row });
      const reply: ScriptedReply = typeof raw === 'string' ? { text: raw } : raw;
      if ((reply.text === undefined) === (reply.tokens === undefined)) throw new Error('ScriptedReply needs exactly one of text / tokens');
      let tokens = reply.tokens ? [...reply.tokens] : this.tokenizer.encode(reply.text!);
      let stopReason: StopReason = 'stop_token';
      if (reply.appendStop ?? true) {
        const stop = params.stopTokenIds[0] ?? this.tokenizer.eosTokenIds[0];
        if (stop === undefined) throw new Error('ScriptedSampler: no stop token to append (params.stopTokenIds and tokenizer.eosTokenIds are empty)');
        tokens.push(stop);
      }
      if (tokens.length > params.maxNewTokens) {
        tokens = tokens.slice(0, params.maxNewTokens);
        stopReason = 'max_tokens';
      } else if (!(reply.appendStop ?? true)) {
        stopReason = params.stopTokenIds.includes(tokens[tokens.length - 1]!) ? 'stop_token' : 'max_tokens';
      }
      const logprobs = reply.logprobs ? reply.logprobs.slice(0, tokens.length) : tokens.map((_, k) => defaultScriptedLogprob(k));
      if (logprobs.length !== tokens.length) throw new Error(`ScriptedReply: ${logprobs.length} logprobs for ${tokens.length} tokens`);
      return { tokens, logprobs, stopReason };
    });
  }
}
