import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng, sampleToken, samplingDistribution, logSoftmax, findStopString, type SamplingParams } from './sampling.ts';
import { runPython, skipWithoutVenv } from '../../../test/python-oracle.ts';

const logitsOf = (p: number[]): Float32Array => Float32Array.from(p.map(Math.log));

/** Empirical frequencies of `draws` samples, and a check that every returned logprob is log q[token]. */
function frequencies(logits: Float32Array, params: SamplingParams, q: number[], draws: number, seed: number): number[] {
  const rng = new Rng(seed);
  const counts = new Array(logits.length).fill(0);
  for (let d = 0; d < draws; d++) {
    const { token, logprob } = sampleToken(logits, params, rng);
    counts[token]++;
    assert.ok(q[token] > 0, `token ${token} is outside the support`);
    assert.ok(Math.abs(logprob - Math.log(q[token])) < 1e-5, `logprob ${logprob} vs ${Math.log(q[token])}`);
  }
  return counts.map((c) => c / draws);
}

function assertFrequencies(freq: number[], q: number[], draws: number): void {
  for (let i = 0; i < q.length; i++) {
    if (q[i] === 0) { assert.equal(freq[i], 0, `token ${i} must never be drawn`); continue; }
    const sd = Math.sqrt((q[i] * (1 - q[i])) / draws);
    assert.ok(Math.abs(freq[i] - q[i]) < 5 * sd, `token ${i}: frequency ${freq[i]} vs probability ${q[i]} (sd ${sd})`);
  }
}

const P4 = [0.05, 0.15, 0.3, 0.5];
const N = 20000;

test('Rng is deterministic, uniform in [0, 1), resumable from getState, and derive() gives distinct streams', () => {
  const a = new Rng(42), b = new Rng(42), c = new Rng(43);
  const xs = Array.from({ length: 1000 }, () => a.next());
  assert.deepEqual(xs, Array.from({ length: 1000 }, () => b.next()));
  assert.notDeepEqual(xs.slice(0, 10), Array.from({ length: 10 }, () => c.next()));
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
  const state = a.getState();
  const ahead = Array.from({ length: 5 }, () => a.next());
  const r = new Rng(0);
  r.setState(state);
  assert.deepEqual(Array.from({ length: 5 }, () => r.next()), ahead);
  const s0 = Rng.derive(7, 0).next(), s1 = Rng.derive(7, 1).next(), s0again = Rng.derive(7, 0).next();
  assert.equal(s0, s0again);
  assert.notEqual(s0, s1);
  assert.notEqual(Rng.derive(7, 1).next(), Rng.derive(8, 0).next());
  assert.throws(() => r.setState([0, 0, 0, 0]), /all-zero/);
  // Bucket uniformity over 10 bins (chi-square with 9 dof; 27.9 is the 0.1% quantile).
  const bins = new Array(10).fill(0);
  const g = new Rng(5);
  for (let i = 0; i < 100000; i++) bins[Math.floor(g.next() * 10)]++;
  const chi2 = bins.reduce((s, o) => s + (o - 10000) ** 2 / 10000, 0);
  assert.ok(chi2 < 27.9, `chi2 ${chi2}`);
});

test('logSoftmax: exact values, temperature scaling, 0 and 1 mean unscaled', () => {
  const l = new Float32Array([1, 2, 3]);
  const z = Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3));
  const got = logSoftmax(l, 1);
  for (let i = 0; i < 3; i++) assert.ok(Math.abs(got[i] - (i + 1 - z)) < 1e-6);
  assert.deepEqual(logSoftmax(l, 0), got);
  const t = logSoftmax(l, 0.5);
  const z2 = Math.log(Math.exp(2) + Math.exp(4) + Math.exp(6));
  for (let i = 0; i < 3; i++) assert.ok(Math.abs(t[i] - (2 * (i + 1) - z2)) < 1e-6);
  const big = logSoftmax(new Float32Array([1000, 1000]), 1);
  assert.ok(Math.abs(big[0] - Math.log(0.5)) < 1e-6, 'no overflow');
});

test('temperature 0 is argmax with the log-prob of the unscaled softmax, and ignores the rng', () => {
  const l = new Float32Array([0.5, 2.5, -1, 2.4]);
  const rng = new Rng(1);
  const before = rng.getState();
  const r = sampleToken(l, { temperature: 0, topP: 0.1, topK: 1 }, rng);
  assert.equal(r.token, 1);
  assert.ok(Math.abs(r.logprob - logSoftmax(l, 1)[1]) < 1e-6);
  assert.deepEqual(rng.getState(), before);
});

test('temperature 1, no filtering: empirical frequencies over 20k draws match softmax', () => {
  assertFrequencies(frequencies(logitsOf(P4), { temperature: 1, topP: 1, topK: 0 }, P4, N, 11), P4, N);
});

test('temperature 0.5 squares the probabilities (renormalised)', () => {
  const sq = P4.map((p) => p * p), z = sq.reduce((a, b) => a + b);
  const q = sq.map((p) => p / z);
  assertFrequencies(frequencies(logitsOf(P4), { temperature: 0.5, topP: 1, topK: 0 }, q, N, 12), q, N);
});

test('top-k keeps exactly the k largest (ties at the k-th value all kept, as HF does)', () => {
  const q = [0, 0, 0.3 / 0.8, 0.5 / 0.8];
  assertFrequencies(frequencies(logitsOf(P4), { temperature: 1, topP: 1, topK: 2 }, q, N, 13), q, N);
  const tie = samplingDistribution(new Float32Array([1, 1, 0, 1]), { temperature: 1, topP: 1, topK: 2 });
  assert.deepEqual([...tie].map((x) => +x.toFixed(6)), [0.333333, 0.333333, 0, 0.333333]);
  const k1 = samplingDistribution(logitsOf(P4), { temperature: 0.7, topP: 1, topK: 1 });
  assert.deepEqual([...k1], [0, 0, 0, 1]);
});

test('top-p keeps the smallest prefix whose mass reaches top_p (always at least one token)', () => {
  // Mass ranked above each token: 0.5 → 0, 0.3 → 0.5, 0.15 → 0.8, 0.05 → 0.95.
  const support = (topP: number): number[] =>
    [...samplingDistribution(logitsOf(P4), { temperature: 1, topP, topK: 0 })].map((x, i) => (x > 0 ? i : -1)).filter((i) => i >= 0);
  assert.deepEqual(support(0.05), [3]);
  assert.deepEqual(support(0.49), [3]);
  assert.deepEqual(support(0.51), [2, 3]);
  assert.deepEqual(support(0.79), [2, 3]);
  assert.deepEqual(support(0.81), [1, 2, 3]);
  assert.deepEqual(support(0.96), [0, 1, 2, 3]);
  const q = [0, 0.15 / 0.95, 0.3 / 0.95, 0.5 / 0.95];
  assertFrequencies(frequencies(logitsOf(P4), { temperature: 1, topP: 0.9, topK: 0 }, q, N, 14), q, N);
});

test('order of operations: temperature, then top-k, then top-p on the renormalised top-k mass', () => {
  // After top-k 3 the masses are .158, .316, .526: top_p .82 drops .158 (.842 ranked above it);
  // without the renormalisation it would be kept (.8 above it).
  const d = samplingDistribution(logitsOf(P4), { temperature: 1, topP: 0.82, topK: 3 });
  assert.deepEqual([...d].map((x) => +x.toFixed(6)), [0, 0, 0.375, 0.625]);
  // Temperature 2 flattens [.1 .2 .3 .4] to [.163 .230 .282 .325]: top_p .65 keeps three tokens
  // (.607 above the third); on the unscaled probabilities it would keep two (.7 above the .2).
  const t = samplingDistribution(logitsOf([0.1, 0.2, 0.3, 0.4]), { temperature: 2, topP: 0.65, topK: 0 });
  assert.deepEqual([...t].map((x) => (x > 0 ? 1 : 0)), [0, 1, 1, 1]);
});

test('top-p on a large near-uniform vocabulary equals a full sort (the quickselect path)', () => {
  const rng = new Rng(3);
  const V = 20000;
  const l = new Float32Array(V);
  for (let i = 0; i < V; i++) l[i] = 0.3 * rng.normal();
  for (const topP of [0.1, 0.5, 0.9, 0.999]) {
    const d = samplingDistribution(l, { temperature: 0.8, topP, topK: 0 });
    const p = Array.from(l, (x) => Math.exp(x / 0.8));
    const total = p.reduce((a, b) => a + b);
    const ranked = p.map((x, i) => i).sort((a, b) => p[b] - p[a] || a - b);
    let above = 0;
    const keep = new Set<number>();
    for (const i of ranked) { if (keep.size > 0 && above >= topP * total) break; keep.add(i); above += p[i]; }
    for (let i = 0; i < V; i++) {
      if (keep.has(i)) assert.ok(Math.abs(d[i] - p[i] / above) < 1e-9, `top_p ${topP} token ${i}`);
      else assert.equal(d[i], 0, `top_p ${topP}: token ${i} must be dropped`);
    }
  }
});

test('same seed, same draws; another seed, other draws', () => {
  const l = logitsOf(P4);
  const params = { temperature: 1, topP: 0.95, topK: 3 };
  const run = (seed: number): number[] => { const r = Rng.derive(seed, 2); return Array.from({ length: 50 }, () => sampleToken(l, params, r).token); };
  assert.deepEqual(run(9), run(9));
  assert.notDeepEqual(run(9), run(10));
});

test('invalid sampling inputs are rejected with a clear message', () => {
  const rng = new Rng(1);
  assert.throws(() => sampleToken(new Float32Array([1, NaN]), { temperature: 1, topP: 1, topK: 0 }, rng), /logit 1 is NaN/);
  assert.throws(() => sampleToken(new Float32Array([1, 2]), { temperature: 1, topP: 0, topK: 0 }, rng), /top_p/);
  assert.throws(() => sampleToken(new Float32Array([1, 2]), { temperature: -1, topP: 1, topK: 0 }, rng), /temperature/);
  assert.throws(() => sampleToken(new Float32Array([-Infinity]), { temperature: 1, topP: 1, topK: 0 }, rng), /finite maximum/);
  // -Infinity logits (masked tokens) are never drawn.
  const d = samplingDistribution(new Float32Array([0, -Infinity, 0]), { temperature: 1, topP: 1, topK: 0 });
  assert.deepEqual([...d], [0.5, 0, 0.5]);
});

test('findStopString finds the earliest stop, ignores empty stops', () => {
  assert.equal(findStopString('abc</s>def###', ['###', '</s>']), 3);
  assert.equal(findStopString('hello', ['', 'x']), -1);
  assert.equal(findStopString('hello', []), -1);
  assert.equal(findStopString('ab\nQ:', ['\nQ:']), 2);
});

test('the filtered distribution equals transformers\' Temperature/TopK/TopP warpers + softmax', { skip: skipWithoutVenv }, () => {
  const rng = new Rng(77);
  const cases: { logits: number[]; temperature: number; topK: number; topP: number }[] = [];
  for (const [temperature, topK, topP] of [[1, 0, 0.9], [0.7, 10, 1], [1.3, 20, 0.8], [0.5, 0, 0.5], [2, 5, 0.95]] as const) {
    cases.push({ logits: Array.from({ length: 64 }, () => Math.fround(2 * rng.normal())), temperature, topK, topP });
  }
  const script = `
import json, sys, torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper
out = []
for c in json.load(sys.stdin):
    s = torch.tensor([c["logits"]], dtype=torch.float32)
    s = TemperatureLogitsWarper(float(c["temperature"]))(None, s)
    if c["topK"] > 0: s = TopKLogitsWarper(c["topK"])(None, s)
    if c["topP"] < 1: s = TopPLogitsWarper(float(c["topP"]))(None, s)
    out.append(torch.softmax(s.double(), -1)[0].tolist())
print(json.dumps(out))
`;
  const want: number[][] = JSON.parse(runPython(['-c', script], { stdin: JSON.stringify(cases) }));
  cases.forEach((c, n) => {
    const got = samplingDistribution(Float32Array.from(c.logits), c);
    for (let i = 0; i < got.length; i++) {
      assert.equal(got[i] > 0, want[n][i] > 0, `case ${n} token ${i}: support differs`);
      assert.ok(Math.abs(got[i] - want[n][i]) < 1e-6, `case ${n} token ${i}: ${got[i]} vs ${want[n][i]}`);
    }
  });
});

test('Rng.fillNormal: mean, variance, tails and symmetry of N(mean, std²); deterministic', () => {
  const n = 400_001;
  const x = new Rng(21).fillNormal(new Float32Array(n), 0.5, 2);
  let m = 0, v = 0, beyond2 = 0, neg = 0;
  for (const t of x) { m += t; }
  m /= n;
  for (const t of x) { v += (t - m) ** 2; if (Math.abs(t - 0.5) > 4) beyond2++; if (t < 0.5) neg++; }
  v /= n;
  assert.ok(Math.abs(m - 0.5) < 0.02, `mean ${m}`);
  assert.ok(Math.abs(v - 4) < 0.05, `variance ${v}`);
  // P(|z| > 2) = 0.0455 for a standard normal.
  assert.ok(Math.abs(beyond2 / n - 0.0455) < 0.002, `tail ${beyond2 / n}`);
  assert.ok(Math.abs(neg / n - 0.5) < 0.005, `symmetry ${neg / n}`);
  assert.ok(x.every(Number.isFinite));
  assert.deepEqual(new Rng(21).fillNormal(new Float32Array(7)), new Rng(21).fillNormal(new Float32Array(8)).subarray(0, 7));
  const a = new Rng(4), b = new Rng(4);
  a.fillNormal(new Float32Array(5));
  b.fillNormal(new Float32Array(6));
  assert.deepEqual(a.getState(), b.getState(), 'odd and even lengths consume the same pairs');
});
