// Sampling math for the embedded engine (issue 2, item 5): a seeded generator, temperature /
// top-k / top-p sampling in the order and with the tie rules of Hugging Face's logits warpers
// (and vLLM's sampler), log-softmax, and stop-string search.
//
// The log-prob returned with each token is under the distribution it was actually drawn from
// (after temperature, top-k and top-p, renormalised), which is what importance ratios in the
// PPO losses compare against (types.ts, SampleResult.logprobs).
import { fastExp } from './kernels/fast-exp.ts';

/**
 * xoshiro128** (Blackman & Vigna): 128 bits of state, period 2^128 − 1, 32-bit outputs; seeded
 * through splitmix32 so that nearby seeds give unrelated streams.
 */
export class Rng {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;

  constructor(seed: number) {
    let x = seed >>> 0;
    // Fold the high bits of seeds beyond 2^32 in too, so 1 and 2^32 + 1 differ.
    x ^= Math.floor(Math.abs(seed) / 2 ** 32) >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** An independent generator for stream `stream` of `seed` (e.g. one per request in a batch). */
  static derive(seed: number, stream: number): Rng {
    // Mix the pair through a 32-bit finaliser so (seed, stream) pairs do not collide trivially.
    let h = (seed >>> 0) ^ Math.imul((stream >>> 0) + 0x632be5ab, 0x9e3779b1);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    h = (h ^ (h >>> 15)) >>> 0;
    const rng = new Rng(h);
    // Also mix the high bits of the seed and the stream into the state, keeping full 53-bit seeds distinct.
    rng.s1 = (rng.s1 ^ (Math.floor(Math.abs(seed) / 2 ** 32) >>> 0)) >>> 0;
    rng.s2 = (rng.s2 ^ (stream >>> 0)) >>> 0;
    if ((rng.s0 | rng.s1 | rng.s2 | rng.s3) === 0) rng.s0 = 1;
    return rng;
  }

  /** Next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 bits of resolution. */
  next(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Standard normal (Box–Muller), for weight initialisation. */
  normal(): number {
    let u = this.next();
    while (u === 0) u = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /**
   * Fills `out` with N(mean, std²) samples, both Box–Muller outputs of each pair of 32-bit draws
   * used (about 4x fewer generator steps than calling normal() per element, which matters when
   * initialising 0.5B-parameter models). Consumes exactly ceil(n / 2) pairs, so the state after
   * the call depends only on n; it is a different sequence from repeated normal() calls.
   */
  fillNormal(out: Float32Array, mean = 0, std = 1): Float32Array {
    const n = out.length;
    const twoPi = 2 * Math.PI;
    for (let i = 0; i < n; i += 2) {
      const u1 = (this.nextUint32() + 1) / 4294967296; // (0, 1]: log is finite
      const u2 = this.nextUint32() / 4294967296;
      const r = std * Math.sqrt(-2 * Math.log(u1));
      const a = twoPi * u2;
      out[i] = mean + r * Math.cos(a);
      if (i + 1 < n) out[i + 1] = mean + r * Math.sin(a);
    }
    return out;
  }

  /** The four state words, for checkpoints. */
  getState(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  setState(state: readonly number[]): void {
    if (state.length !== 4 || state.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffffffff)) {
      throw new Error(`Rng.setState: expected four 32-bit unsigned words, got ${JSON.stringify(state)}`);
    }
    if (state.every((w) => w === 0)) throw new Error('Rng.setState: the all-zero state is not valid for xoshiro128**');
    [this.s0, this.s1, this.s2, this.s3] = state.map((w) => w | 0);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

export interface SamplingParams {
  /** 0 = greedy (argmax). */
  temperature: number;
  /** 1 = off. */
  topP: number;
  /** 0 = off. */
  topK: number;
}

export interface SampledToken {
  token: number;
  /** log-prob of `token` under the distribution it was drawn from (after temperature, top-k, top-p). */
  logprob: number;
}

/** log softmax(logits / temperature) as float32; temperature 0 or 1 leaves the logits unscaled. */
export function logSoftmax(logits: Float32Array, temperature: number): Float32Array {
  const scale = temperature === 0 || temperature === 1 ? 1 : 1 / temperature;
  if (!(scale > 0) || !Number.isFinite(scale)) throw new Error(`logSoftmax: temperature must be >= 0, got ${temperature}`);
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] * scale > max) max = logits[i] * scale;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += fastExp(logits[i] * scale - max);
  const logZ = max + Math.log(sum);
  const out = new Float32Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] * scale - logZ;
  return out;
}

/** Scratch buffers reused across calls (sampling runs once per token per sequence). */
let probs = new Float64Array(0);
let order = new Int32Array(0);
let keptMask = new Uint8Array(0);
let selectScratch = new Float64Array(0);

/**
 * Draws one token from `logits` (one row, length vocab): temperature 0 → argmax with the log-prob
 * of the unscaled softmax; otherwise logits / T, then top-k (keep every token whose scaled logit
 * is >= the k-th largest, as HF's TopKLogitsWarper does), then top-p on the renormalised
 * probabilities (keep a token iff the mass of the tokens ranked strictly above it is < top_p,
 * which is HF's and vLLM's "cumulative mass <= 1 − top_p is removed", always at least one token),
 * renormalise and draw.
 */
export function sampleToken(logits: Float32Array, params: SamplingParams, rng: Rng): SampledToken {
  return drawToken(logits, params, params.temperature === 0 ? 0 : rng.next());
}

/**
 * sampleToken with the generator's draw given: `uniform` is the request's rng.next() (ignored at
 * temperature 0, where sampleToken draws nothing). The calling thread draws every request's uniform
 * in turn and the draws over the vocabulary run on any thread (sample-jobs.ts), the same arithmetic.
 */
export function drawToken(logits: Float32Array, params: SamplingParams, uniform: number): SampledToken {
  const V = logits.length;
  const { maxIdx, max } = checkAndMax(logits, params);
  if (params.temperature === 0) {
    let sum = 0;
    for (let i = 0; i < V; i++) sum += fastExp(logits[i] - max);
    return { token: maxIdx, logprob: -Math.log(sum) };
  }
  const total = fillFilteredProbs(logits, params, max);
  // Inverse-CDF draw over the kept tokens.
  const u = uniform * total;
  let acc = 0;
  let token = -1;
  for (let i = 0; i < V; i++) {
    const p = probs[i];
    if (p === 0) continue;
    acc += p;
    token = i;
    if (u < acc) break;
  }
  return { token, logprob: Math.log(probs[token] / total) };
}

/**
 * The normalised distribution `sampleToken` draws from (zeros outside top-k / top-p); greedy
 * (temperature 0) gives a one-hot vector at the argmax. For tests and diagnostics.
 */
export function samplingDistribution(logits: Float32Array, params: SamplingParams): Float64Array {
  const V = logits.length;
  const { maxIdx, max } = checkAndMax(logits, params);
  const out = new Float64Array(V);
  if (params.temperature === 0) {
    out[maxIdx] = 1;
    return out;
  }
  const total = fillFilteredProbs(logits, params, max);
  for (let i = 0; i < V; i++) out[i] = probs[i] / total;
  return out;
}

function checkAndMax(logits: Float32Array, params: SamplingParams): { maxIdx: number; max: number } {
  const { temperature, topP, topK } = params;
  if (logits.length === 0) throw new Error('sampleToken: empty logits');
  if (!(temperature >= 0) || !Number.isFinite(temperature)) throw new Error(`sampleToken: temperature must be a finite number >= 0, got ${temperature}`);
  if (!(topP > 0 && topP <= 1)) throw new Error(`sampleToken: top_p must be in (0, 1], got ${topP}`);
  if (!Number.isInteger(topK) || topK < 0) throw new Error(`sampleToken: top_k must be a non-negative integer, got ${topK}`);
  let maxIdx = -1;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (Number.isNaN(x)) throw new Error(`sampleToken: logit ${i} is NaN`);
    if (x > max) { max = x; maxIdx = i; }
  }
  if (maxIdx < 0 || max === Infinity) throw new Error('sampleToken: logits must have a finite maximum');
  return { maxIdx, max };
}

/** Fills `probs[0..V)` with the unnormalised kept probabilities and returns their sum. */
function fillFilteredProbs(logits: Float32Array, params: SamplingParams, max: number): number {
  const V = logits.length;
  const inv = 1 / params.temperature;
  if (probs.length < V) probs = new Float64Array(V);
  // Relative to the maximum (which gets 1), so nothing overflows. Top-k is decided on the logits
  // (dividing by T > 0 keeps the order), so only the k survivors pay for an exp.
  if (params.topK > 0 && params.topK < V) {
    for (let i = 0; i < V; i++) probs[i] = logits[i];
    const kth = kthLargest(probs, V, params.topK);
    for (let i = 0; i < V; i++) probs[i] = logits[i] >= kth ? fastExp((logits[i] - max) * inv) : 0;
  } else {
    for (let i = 0; i < V; i++) probs[i] = fastExp((logits[i] - max) * inv);
  }
  let total = 0;
  for (let i = 0; i < V; i++) total += probs[i];
  if (params.topP < 1) total = applyTopP(V, total, params.topP);
  return total;
}

/** The k-th largest of probs[0..V) (k ≥ 1), by quickselect on a copy. */
function kthLargest(values: Float64Array, V: number, k: number): number {
  if (selectScratch.length < V) selectScratch = new Float64Array(V);
  const a = selectScratch;
  a.set(values.subarray(0, V));
  let lo = 0, hi = V - 1;
  const target = k - 1; // index in descending order
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) { const t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target];
  }
  return a[target];
}

/**
 * Zeroes the tokens outside the top-p nucleus in `probs` and returns the kept mass. Tokens are
 * ranked by (probability descending, token id ascending), a total order; the nucleus is the
 * shortest prefix of that ranking whose mass reaches top_p. It is found by a mass-weighted
 * quickselect, O(V) expected, so near-uniform distributions over large vocabularies (random
 * models) cost no full sort.
 */
function applyTopP(V: number, total: number, topP: number): number {
  const need = topP * total;
  if (order.length < V) order = new Int32Array(V);
  if (keptMask.length < V) keptMask = new Uint8Array(V);
  // Candidates: the tokens at or above the largest of a few thresholds whose mass already reaches
  // top_p (the nucleus is a prefix of the ranking, so it lies inside them). For the peaked
  // distributions of trained models this leaves a few hundred tokens out of 150k.
  let pmax = 0;
  for (let i = 0; i < V; i++) if (probs[i] > pmax) pmax = probs[i];
  const t1 = pmax * 1e-2, t2 = pmax * 1e-4, t3 = pmax * 1e-8;
  let m1 = 0, m2 = 0, m3 = 0;
  for (let i = 0; i < V; i++) {
    const p = probs[i];
    if (p >= t3) { m3 += p; if (p >= t2) { m2 += p; if (p >= t1) m1 += p; } }
  }
  const threshold = m1 >= need ? t1 : m2 >= need ? t2 : m3 >= need ? t3 : Number.MIN_VALUE;
  let n = 0;
  for (let i = 0; i < V; i++) if (probs[i] >= threshold) order[n++] = i;
  const ranksBefore = (a: number, b: number): boolean => probs[a] > probs[b] || (probs[a] === probs[b] && a < b);

  // Invariant: order[0..lo) are kept and hold massBefore < need; the cut lies in order[lo..hi].
  let lo = 0, hi = n - 1, massBefore = 0, cut = n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const pivot = order[mid];
    order[mid] = order[hi]; order[hi] = pivot;
    let store = lo;
    let massLeft = 0;
    for (let r = lo; r < hi; r++) {
      const t = order[r];
      if (ranksBefore(t, pivot)) { order[r] = order[store]; order[store] = t; store++; massLeft += probs[t]; }
    }
    order[hi] = order[store]; order[store] = pivot;
    if (massBefore + massLeft >= need) {
      hi = store - 1; // the pivot has at least `need` ranked above it: it and the right part go
    } else {
      massBefore += massLeft + probs[pivot];
      if (massBefore >= need) { cut = store; break; }
      lo = store + 1;
    }
  }
  keptMask.fill(0, 0, V);
  let kept = 0;
  for (let r = 0; r <= cut; r++) { keptMask[order[r]] = 1; kept += probs[order[r]]; }
  for (let i = 0; i < V; i++) if (keptMask[i] === 0) probs[i] = 0;
  return kept;
}

/** Index of the earliest occurrence of any non-empty stop string in `text`, or -1. */
export function findStopString(text: string, stops: readonly string[]): number {
  let best = -1;
  for (const s of stops) {
    if (s.length === 0) continue;
    const at = text.indexOf(s);
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  return best;
}
