// A SamplingEngine (src/engine/types.ts) over any OpenAI-compatible server (vLLM, SGLang, llama.cpp's
// server, Ollama): for prompt-only baselines, evaluation and teacher scoring, where no training happens
// on the served model. Token ids travel both ways: prompts go to the completions endpoint as token-id
// lists (no chat template, no re-tokenisation), generated tokens come back as ids (vLLM's
// `return_token_ids`; or `return_tokens_as_token_ids`, which names each log-prob's token "token_id:N";
// or llama.cpp's llama-server, whose log-probs list each token's id). Scoring a given sequence needs
// the server's prompt log-probs (vLLM's `prompt_logprobs`); a server that has none (llama-server) is
// refused in one line rather than approximated. A server that takes text prompts only
// (llama-cpp-python's `llama_cpp.server`) is refused in one line for sampling and scoring alike: its
// replies name tokens by text, and mapping text back to ids is not exact in general.
//
// What the served numbers mean (docs/scaling.md): sampled tokens' log-probs are what the server
// reports; vLLM's default (`--logprobs-mode raw_logprobs`) is the model's distribution before
// temperature, top-k and top-p, whereas the embedded and torch engines report the distribution the
// token was drawn from (start vLLM with `--logprobs-mode processed_logprobs` for those). Prompt
// log-probs are unscaled, so `score` takes temperature 0 or 1 only.
import type { ModelInfo, PolicyTarget, SampleParams, SampleResult, SamplingEngine, ScoreOptions, ScoreRequest, StopReason } from '../types.ts';
import { modelInfo } from '../types.ts';
import { readHfConfig } from '../hf/config.ts';

export interface OpenAiEngineOptions {
  /** The server's OpenAI API root, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  /** The served model's name (what /v1/models lists), used for the base target; "" = the one model the server lists. */
  model: string;
  /** Served names of LoRA adapters (vLLM's --lora-modules NAME=PATH), by the adapter name callers use. */
  adapters?: Record<string, string>;
  /** What the API does not report: read from this Hugging Face model folder's config.json ... */
  modelDir?: string;
  /** ... or given here (vocabSize is required one way or the other). */
  info?: Partial<ModelInfo>;
  apiKey?: string;
  /** Per request; default 10 minutes. */
  timeoutMs?: number;
}

interface Choice {
  index: number;
  finish_reason: string | null;
  stop_reason?: number | string | null;
  token_ids?: number[] | null;
  /** vLLM's legacy completions shape (tokens, token_logprobs), or llama-server's (content: one entry per token, with its id). */
  logprobs?: { tokens?: string[]; token_logprobs?: (number | null)[]; content?: { id: number; logprob: number }[] } | null;
  prompt_logprobs?: (Record<string, { logprob: number }> | null)[] | null;
}

export class OpenAiSamplingEngine implements SamplingEngine {
  private constructor(readonly info: ModelInfo, private readonly options: OpenAiEngineOptions) {}

  /** Checks that the server serves `model` (GET /models) and takes its context length from there when it reports one (vLLM's max_model_len). */
  static async open(options: OpenAiEngineOptions): Promise<OpenAiSamplingEngine> {
    const fromDir = options.modelDir ? modelInfo(readHfConfig(options.modelDir)) : undefined;
    // max_model_len: vLLM's context length; meta.n_ctx: llama-server's (its -c, not the model's training length).
    // Choosing the one listed model waits at most 30 s for the list.
    const listed = await request<{ data?: { id: string; max_model_len?: number; meta?: { n_ctx?: number } }[] }>(options, 'GET', '/models', undefined, options.model ? undefined : 30_000);
    const names = (listed.data ?? []).map((m) => m.id);
    if (!options.model && names.length !== 1) throw new ServedModelChoiceError(`${options.baseUrl} serves ${names.length === 0 ? 'no model' : `${names.length} models (${names.join(', ')})`}: name the one to use`);
    const model = options.model || names[0]!;
    const served = listed.data?.find((m) => m.id === model);
    if (!served) throw new Error(`${options.baseUrl}: serves no model named '${model}' (it serves: ${names.join(', ') || 'none'})`);
    const vocabSize = options.info?.vocabSize ?? fromDir?.vocabSize;
    if (vocabSize === undefined) throw new Error(`${options.baseUrl}: the API does not report the vocabulary size; give modelDir or info.vocabSize`);
    const info: ModelInfo = {
      vocabSize,
      contextLength: options.info?.contextLength ?? served.max_model_len ?? served.meta?.n_ctx ?? fromDir?.contextLength ?? Number.MAX_SAFE_INTEGER,
      bosTokenId: options.info?.bosTokenId ?? fromDir?.bosTokenId ?? null,
      eosTokenIds: options.info?.eosTokenIds ?? fromDir?.eosTokenIds ?? [],
    };
    return new OpenAiSamplingEngine(info, { ...options, model });
  }

  private servedName(target: PolicyTarget): string {
    if (target.kind === 'base') return this.options.model;
    const name = this.options.adapters?.[target.name];
    if (!name) throw new Error(`adapter '${target.name}' is not served by ${this.options.baseUrl} (serve it, e.g. vLLM's --lora-modules, and name it in the engine's adapters option)`);
    return name;
  }

  async sample(target: PolicyTarget, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    if (params.stopStrings.length > 0) throw new Error('stopStrings: the OpenAI engine works on token ids (stop with stopTokenIds)');
    if (prompts.length === 0) return [];
    const body = {
      model: this.servedName(target), prompt: prompts, max_tokens: params.maxNewTokens,
      // Greedy is temperature 0 for these servers too; top_k -1 is vLLM's and SGLang's "off" (llama.cpp:
      // any k <= 0). min_p 0 and repeat_penalty 1 turn off llama.cpp's other default filters (its min_p
      // is 0.05), which the other engines do not apply.
      temperature: params.temperature, top_p: params.topP, top_k: params.topK > 0 ? params.topK : -1, min_p: 0, repeat_penalty: 1, seed: params.seed,
      // logprobs 1, not 0: llama-server returns no log-probs at all for 0 (vLLM reports the sampled
      // token's either way).
      stop_token_ids: params.stopTokenIds, logprobs: 1, return_token_ids: true, return_tokens_as_token_ids: true,
      skip_special_tokens: false, include_stop_str_in_output: true,
    };
    const reply = await this.tokenRequest<{ choices: Choice[] }>('sample', body);
    const choices = [...reply.choices].sort((a, b) => a.index - b.index);
    if (choices.length !== prompts.length) throw new Error(`${this.options.baseUrl}: ${choices.length} completions for ${prompts.length} prompts`);
    return choices.map((c) => {
      const content = c.logprobs?.content;
      const tokens = c.token_ids ?? content?.map((e) => e.id) ?? (c.logprobs?.tokens ?? []).map(tokenIdOf);
      const logprobs = content?.map((e) => e.logprob) ?? (c.logprobs?.token_logprobs ?? []).map((x) => x ?? Number.NaN);
      if (logprobs.length !== tokens.length) throw new Error(`${this.options.baseUrl}: ${tokens.length} tokens but ${logprobs.length} log-probs in a completion (does the server return token ids?)`);
      // A server without stop_token_ids (llama-server has none) generates past them: cut after the first
      // one, where the server would have stopped, so every server returns what the embedded engine does.
      const stopAt = tokens.findIndex((t) => params.stopTokenIds.includes(t));
      if (stopAt >= 0) return { tokens: tokens.slice(0, stopAt + 1), logprobs: logprobs.slice(0, stopAt + 1), stopReason: 'stop_token' as const };
      return { tokens, logprobs, stopReason: stopReasonOf(c, tokens, params.stopTokenIds, this.info.eosTokenIds) };
    });
  }

  /**
   * POST /completions with token-id prompts. A server that takes text prompts only (llama-cpp-python's
   * llama_cpp.server answers a token-id list with a validation error naming `prompt` and "valid
   * string") is refused in one line: this engine neither re-tokenises prompts nor maps returned text
   * back to token ids.
   */
  private async tokenRequest<T>(what: 'sample' | 'score', body: unknown): Promise<T> {
    try {
      return await request<T>(this.options, 'POST', '/completions', body);
    } catch (err) {
      const detail = err instanceof HttpError ? err.detail : '';
      if (/\bprompt\b/.test(detail) && /valid string/i.test(detail)) {
        const cannot = what === 'score' ? 'cannot score a given sequence' : 'cannot sample token ids';
        throw new Error(`${this.options.baseUrl} ${cannot}: it takes text prompts only (as llama-cpp-python's server does) and this engine sends token ids; serve the model with vLLM or llama.cpp's llama-server, which take them`);
      }
      throw err;
    }
  }

  async score(target: PolicyTarget, batch: ScoreRequest[], options: ScoreOptions = {}): Promise<Float32Array[]> {
    const t = options.temperature ?? 1;
    if (t !== 0 && t !== 1) throw new Error(`score: the server's prompt log-probs are unscaled; temperature ${t} cannot be scored (only 0 or 1)`);
    const model = this.servedName(target);
    const out: Float32Array[] = [];
    for (const r of batch) {
      if (r.scoreFrom < 1) throw new Error(`scoreFrom must be at least 1, got ${r.scoreFrom}`);
      if (r.scoreFrom >= r.tokens.length) { out.push(new Float32Array(0)); continue; }
      // One generated token is the least the servers accept; prompt_logprobs 0 = the prompt's own tokens only.
      const reply = await this.tokenRequest<{ choices: Choice[] }>('score', {
        model, prompt: r.tokens, max_tokens: 1, temperature: 0, prompt_logprobs: 0, return_tokens_as_token_ids: true,
      });
      const lp = reply.choices[0]?.prompt_logprobs;
      if (!Array.isArray(lp)) throw new Error(`${this.options.baseUrl} cannot score a given sequence: its completions carry no prompt log-probs (vLLM's prompt_logprobs; llama.cpp's llama-server has none)`);
      const row = new Float32Array(r.tokens.length - r.scoreFrom);
      for (let k = 0; k < row.length; k++) {
        const pos = r.scoreFrom + k, entry = lp[pos];
        const hit = entry?.[String(r.tokens[pos])] ?? entry?.[`token_id:${r.tokens[pos]}`];
        if (!hit) throw new Error(`${this.options.baseUrl}: no prompt log-prob for token ${r.tokens[pos]} at position ${pos}`);
        row[k] = hit.logprob;
      }
      out.push(row);
    }
    return out;
  }

  async dispose(): Promise<void> {}
}

/** "token_id:123" (vLLM's return_tokens_as_token_ids) → 123. */
function tokenIdOf(s: string): number {
  const m = /^token_id:(\d+)$/.exec(s);
  if (!m) throw new Error(`the server named a generated token '${s}', not by id: it needs return_tokens_as_token_ids (vLLM) or token_ids in its completions`);
  return Number(m[1]);
}

function stopReasonOf(c: Choice, tokens: number[], stopIds: number[], eos: number[]): StopReason {
  if (c.finish_reason === 'length') return 'max_tokens';
  const last = tokens[tokens.length - 1];
  if (last !== undefined && (stopIds.includes(last) || eos.includes(last))) return 'stop_token';
  return c.finish_reason === 'stop' ? 'stop_token' : 'context_full';
}

/** A server's error reply: the one-line message, and the whole reply text for callers that recognise a refusal. */
class HttpError extends Error {
  constructor(message: string, readonly detail: string) { super(message); }
}

/** The server lists no model, or several, and the options name none: the caller names its key. */
export class ServedModelChoiceError extends Error {}

async function request<T>(o: OpenAiEngineOptions, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = o.timeoutMs ?? 600_000): Promise<T> {
  const url = o.baseUrl.replace(/\/+$/, '') + path;
  let res: Response;
  try {
    res = await fetch(url, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new Error(`${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let message = text.slice(0, 300);
    try { message = (JSON.parse(text) as { error?: { message?: string }; message?: string }).error?.message ?? message; } catch { /* not JSON: the raw text */ }
    throw new HttpError(`${url}: HTTP ${res.status}: ${message.split('\n')[0]}`, message);
  }
  return JSON.parse(text) as T;
}
