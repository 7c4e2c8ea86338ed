// Stop strings applied after the fact, for samplers that generate on token ids and cannot stop on
// text themselves: the torch worker (it has no tokenizer) and the vLLM sampler (the server is started
// with --skip-tokenizer-init). The sample is generated up to its other limits and then cut where the
// embedded engine, which checks the decoded text after every token, would have stopped.
// The search is the embedded engine's own (embedded/sampling.ts: findStopString), so every engine cuts at
// the same place (one of the two engine-level imports from an engine's folder: trainables.ts says why).
import type { Decode, SampleParams, SampleResult } from './types.ts';
import { findStopString } from './embedded/sampling.ts';

/**
 * Cuts `r` in place at its first token whose decoded prefix contains a stop string (stopReason
 * 'stop_string'), found by bisection: a prefix that contains a stop string keeps containing it as
 * tokens are appended. A stop token that ends the sample at the same token wins, as in the embedded
 * engine, which checks stop tokens first.
 */
export function cutAtStopString(r: SampleResult, stops: readonly string[], decode: Decode): void {
  if (r.tokens.length === 0 || findStopString(decode(r.tokens), stops) < 0) return;
  let lo = 1, hi = r.tokens.length; // the shortest prefix containing a stop string lies in [lo, hi]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (findStopString(decode(r.tokens.slice(0, mid)), stops) >= 0) hi = mid; else lo = mid + 1;
  }
  if (r.stopReason === 'stop_token' && hi === r.tokens.length) return; // the stop token came first
  r.tokens.length = hi;
  r.logprobs.length = hi;
  r.stopReason = 'stop_string';
}

/**
 * Samples through `sampleIds` (which gets the parameters without stop strings) and cuts every result
 * at its stop strings: what each engine that cuts after the fact does. Stop strings without a decoder
 * are refused (checkStopStringsDecodable).
 */
export async function sampleCutAtStopStrings(params: SampleParams, decode: Decode | undefined, sampleIds: (params: SampleParams) => Promise<SampleResult[]>): Promise<SampleResult[]> {
  const { stopStrings } = params;
  checkStopStringsDecodable(stopStrings, decode);
  const results = await sampleIds({ ...params, stopStrings: [] });
  if (stopStrings.length > 0) for (const r of results) cutAtStopString(r, stopStrings, decode!);
  return results;
}

/** The refusal when stop strings come without a decoder: the same line from every engine that cuts after the fact. */
export function checkStopStringsDecodable(stops: readonly string[], decode: Decode | undefined): void {
  if (stops.length > 0 && !decode) throw new Error('stopStrings need a decode function (engine option `decode`)');
}
