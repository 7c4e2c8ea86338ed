// Batched sampling with a KV cache (issue 2, item 5). All prompts are prefilled in one packed pass,
// then every still-running sequence decodes one token per step in a single batched pass. With
// maxSequences, at most that many are in flight: a finished sequence's slot is taken by the next
// waiting request, prefilled in the same pass as the others' next token (continuous batching).
// Each request draws from its own generator Rng.derive(seed, requestIndex), so a request's tokens
// do not depend on which other requests share its batch.
// Requests with the same prompt (the G samples of one prompt in the GRPO family, MAS-OPD and AT-GRPO's
// K candidates) are prefilled once: the first of them computes the prompt's keys and values, which are
// copied into the others' slots, and all of them sample their first token from its last logits.
import type { Decode, SampleParams, SampleResult } from '../types.ts';
import type { DecoderModel } from './model.ts';
import type { LoraAdapter } from './lora.ts';
import type { SeqSpan } from './decoder-layer.ts';
import { KvCache } from './kv-cache.ts';
import { reserveMemory } from './memory-budget.ts';
import { sgemm } from './gemm.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';
import { outputMatrix } from './weights.ts';
import { Rng, findStopString } from './sampling.ts';
import { drawTokens } from './sample-jobs.ts';

/**
 * logits [rows, vocab] of the hidden rows listed in `rows`, in a buffer from the pool (shared, so the
 * product can be split across threads) that the caller releases.
 */
export function logitsOfRows(model: DecoderModel, hidden: Float32Array, rows: number[]): Float32Array {
  const H = model.cfg.hiddenSize, V = model.cfg.vocabSize;
  const sel = takeBuffer(rows.length * H);
  rows.forEach((r, i) => sel.set(hidden.subarray(r * H, (r + 1) * H), i * H));
  const logits = takeBuffer(rows.length * V);
  sgemm(false, true, rows.length, V, H, 1, sel, 0, H, outputMatrix(model.weights).data, 0, H, 0, logits, 0, V);
  releaseBuffers(sel);
  return logits;
}

export function validateSampleParams(p: SampleParams): void {
  if (!(p.temperature >= 0)) throw new Error(`temperature must be >= 0, got ${p.temperature}`);
  if (!(p.topP > 0 && p.topP <= 1)) throw new Error(`topP must be in (0, 1], got ${p.topP}`);
  if (!(p.topK >= 0) || !Number.isInteger(p.topK)) throw new Error(`topK must be a non-negative integer, got ${p.topK}`);
  if (!(p.maxNewTokens >= 0) || !Number.isInteger(p.maxNewTokens)) throw new Error(`maxNewTokens must be a non-negative integer, got ${p.maxNewTokens}`);
}

/**
 * For each prompt, the index of the first prompt with the same tokens (itself when it is the first):
 * the prompts whose leader is themselves are the ones prefilled.
 */
export function promptLeaders(prompts: number[][]): number[] {
  const first = new Map<string, number>();
  return prompts.map((pr, i) => {
    const key = pr.join(',');
    const seen = first.get(key);
    if (seen !== undefined) return seen;
    first.set(key, i);
    return i;
  });
}

export interface GenerateOptions {
  /**
   * Prefill each distinct prompt of a call once and copy its keys and values to its duplicates
   * (default true). Off only to measure the gain (bench/real-model.ts) or to check that sharing changes nothing.
   */
  sharePrefill?: boolean;
  /**
   * At most this many sequences in flight (0 or absent: all of them). The key/value cache has this many
   * slots; a request waits until a sequence finishes, then takes its slot and is prefilled in the same
   * pass as the others' next token (continuous batching). Bounds sampling's memory on a real model.
   */
  maxSequences?: number;
}

export function generate(
  model: DecoderModel, adapter: LoraAdapter | null, prompts: number[][], p: SampleParams, decode: Decode | undefined,
  options: GenerateOptions = {},
): SampleResult[] {
  validateSampleParams(p);
  if (p.stopStrings.length > 0 && !decode) throw new Error('stopStrings need a decode function (engine option `decode`)');
  const cap = options.maxSequences ?? 0;
  if (!(Number.isInteger(cap) && cap >= 0)) throw new Error(`maxSequences must be a non-negative integer, got ${cap}`);
  const cfg = model.cfg, V = cfg.vocabSize;
  const B = prompts.length;
  prompts.forEach((pr, i) => {
    if (pr.length === 0) throw new Error(`prompt ${i} is empty`);
    if (pr.length >= cfg.maxPositionEmbeddings) throw new Error(`prompt ${i} has ${pr.length} tokens, the model's context is ${cfg.maxPositionEmbeddings}`);
  });
  const results: SampleResult[] = prompts.map(() => ({ tokens: [], logprobs: [], stopReason: 'max_tokens' }));
  if (B === 0 || p.maxNewTokens === 0) return results;
  const slots = cap > 0 ? Math.min(cap, B) : B;
  const maxPrompt = Math.max(...prompts.map((x) => x.length));
  const maxCtx = Math.min(cfg.maxPositionEmbeddings, maxPrompt + p.maxNewTokens);
  const floatsPerPosition = 2 * cfg.numHiddenLayers * cfg.numKeyValueHeads * cfg.headDim;
  reserveMemory('the sampling batch\'s key/value cache', 4 * slots * maxCtx * floatsPerPosition, `${slots} sequences × ${maxCtx} positions`);
  const cache = new KvCache(cfg, slots, maxCtx);
  const rngs = prompts.map((_, i) => Rng.derive(p.seed, i));
  const stopIds = new Set(p.stopTokenIds);
  const sp = { temperature: p.temperature, topP: p.topP, topK: p.topK };
  const length = prompts.map((x) => x.length);
  const slotOf: number[] = new Array<number>(B);
  const freeSlots = Array.from({ length: slots }, (_, s) => slots - 1 - s); // popped lowest first
  let waiting = 0; // requests are admitted in their order
  let active: number[] = [];

  try {
    for (;;) {
      // One pass: the next token of every running sequence, then the prompts of the requests admitted
      // into free slots (each distinct prompt among them once; its keys and values are copied after).
      const admitted: number[] = [];
      while (waiting < B && freeSlots.length > 0) { slotOf[waiting] = freeSlots.pop()!; admitted.push(waiting++); }
      const seqs: SeqSpan[] = [];
      const tokens: number[] = [];
      const rowOf = new Map<number, number>();
      for (const i of active) {
        seqs.push({ row0: tokens.length, len: 1, past: length[i]! - 1, slot: slotOf[i]! });
        tokens.push(results[i]!.tokens[results[i]!.tokens.length - 1]!);
        rowOf.set(i, tokens.length - 1);
      }
      const leaders = options.sharePrefill === false ? admitted.map((_, k) => k) : promptLeaders(admitted.map((i) => prompts[i]!));
      admitted.forEach((i, k) => {
        if (leaders[k] !== k) return;
        seqs.push({ row0: tokens.length, len: prompts[i]!.length, past: 0, slot: slotOf[i]! });
        for (const t of prompts[i]!) tokens.push(t);
        rowOf.set(i, tokens.length - 1);
      });
      if (seqs.length === 0) break;
      const pass = model.forward(Int32Array.from(tokens), seqs, adapter, cache, false);
      admitted.forEach((i, k) => {
        if (leaders[k] === k) return;
        const lead = admitted[leaders[k]!]!;
        cache.copySlot(slotOf[lead]!, slotOf[i]!, prompts[i]!.length);
        rowOf.set(i, rowOf.get(lead)!);
      });
      const stepping = [...active, ...admitted];
      const logits = logitsOfRows(model, pass.hidden, stepping.map((i) => rowOf.get(i)!));
      const next: number[] = [];
      // Each request's uniform from its own generator, here; the draws over the vocabulary on the pool.
      const drawn = drawTokens(logits, stepping.length, V, sp, stepping.map((i) => (sp.temperature === 0 ? 0 : rngs[i]!.next())));
      stepping.forEach((i, k) => {
        const { token, logprob } = drawn[k]!;
        const r = results[i]!;
        r.tokens.push(token);
        r.logprobs.push(logprob);
        length[i]!++;
        if (stopIds.has(token)) r.stopReason = 'stop_token';
        else if (p.stopStrings.length > 0 && findStopString(decode!(r.tokens), p.stopStrings) >= 0) r.stopReason = 'stop_string';
        else if (r.tokens.length >= p.maxNewTokens) r.stopReason = 'max_tokens';
        else if (length[i]! >= maxCtx) r.stopReason = 'context_full';
        else { next.push(i); return; }
        freeSlots.push(slotOf[i]!);
      });
      releaseBuffers(logits);
      active = next;
    }
  } finally {
    cache.release(); // back to the buffer pool for the next call
  }
  return results;
}
