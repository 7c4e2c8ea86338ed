// The engine's thread pool (src/engine/embedded/thread-pool.ts): a split product, attention's items
// and the row kernels give, on the pool's threads, exactly what the same parts give run one after
// another in this thread (bit for bit), and the split product matches the unsplit one; operands
// outside shared memory run here; a worker's failure is reported and the engine falls back to
// OpenBLAS's threads. Two threads, whatever the machine has.
process.env.MARFT_THREADS = '2';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sgemm } from '../../src/engine/embedded/gemm.ts';
import { sgemm as blasSgemm, blasInfo } from '../../src/engine/embedded/blas.ts';
import { gemmJob, splitBounds } from '../../src/engine/embedded/gemm-job.ts';
import { poolThreads, runJob, workersReady } from '../../src/engine/embedded/thread-pool.ts';
import { attentionPoolJob, type AttentionJob } from '../../src/engine/embedded/attention-jobs.ts';
import { swigluBackwardRows, swigluForwardRows, tokenLogprobsBackwardRows, tokenLogprobsRows } from '../../src/engine/embedded/row-jobs.ts';
import { swigluBackward, swigluForward } from '../../src/engine/embedded/kernels/swiglu.ts';
import { tokenLogprobs, tokenLogprobsBackward } from '../../src/engine/embedded/kernels/log-softmax.ts';
import { takeBuffer } from '../../src/engine/embedded/buffer-pool.ts';
import { drawTokens } from '../../src/engine/embedded/sample-jobs.ts';
import { ownScoreScratch, useScoreScratch } from '../../src/engine/embedded/kernels/attention.ts';
import { Rng, sampleToken } from '../../src/engine/embedded/sampling.ts';
import { sharedFloats, sharedInts } from '../../src/engine/shareable-arrays.ts';
import { JobKind, type PoolJob } from '../../src/engine/embedded/pool-protocol.ts';
import { SIMD_SCRATCH_BYTES } from '../../src/engine/embedded/wasm/simd.ts';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function filled(a: Float32Array, seed: number): Float32Array {
  let s = seed >>> 0;
  for (let i = 0; i < a.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2 ** 32 - 0.5;
  }
  return a;
}

/** A shared array of n floats (from the WebAssembly arena), filled from the seed. */
const shared = (n: number, seed: number): Float32Array => filled(takeBuffer(n), seed);

async function poolReady(): Promise<void> {
  // The first large product starts the workers; they take about half a second.
  sgemm(false, false, 256, 256, 256, 1, shared(65536, 1), 0, 256, shared(65536, 2), 0, 256, 0, takeBuffer(65536), 0, 256);
  for (let i = 0; i < 400 && !workersReady(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(workersReady(), 'the pool workers did not start within 20 s');
  assert.equal(poolThreads(), 2);
  assert.equal(blasInfo().threads, 1, 'OpenBLAS is held at one thread while the pool runs');
}

/** Runs a job's items one after another in this thread. */
function serial(job: PoolJob): void {
  for (let i = 0; i < job.items; i++) job.run(i);
}

function assertBitEqual(a: Float32Array, b: Float32Array, what: string): void {
  assert.equal(a.length, b.length, what);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) assert.fail(`${what}: element ${i} is ${a[i]} vs ${b[i]}`);
}

test('split bounds: parts start at multiples of the alignment and cover the whole extent', () => {
  assert.deepEqual(splitBounds(1024, 2), [0, 512, 1024]);
  assert.deepEqual(splitBounds(100, 3), [0, 32, 64, 100]);
  assert.deepEqual(splitBounds(40, 4), [0, 16, 40]); // only two parts of at least 16
  assert.equal(splitBounds(31, 2), null);
  assert.deepEqual(splitBounds(10, 2, 1), [0, 5, 10]);
});

test('a product split across the pool equals its parts run here bit for bit, and the unsplit product to 1e-5', async () => {
  await poolReady();
  for (const [tA, tB] of [[false, false], [false, true], [true, false], [true, true]] as const) {
    for (const [M, N, K] of [[300, 200, 96], [96, 400, 130]] as const) { // tall (rows split) and wide (columns split)
      const lda = (tA ? M : K) + 3, ldb = (tB ? K : N) + 5, ldc = N + 7, off = 11;
      const A = shared(off + lda * (tA ? K : M), 3), B = shared(off + ldb * (tB ? N : K), 4);
      const C0 = shared(off + ldc * M, 5);
      const Cp = takeBuffer(C0.length), parts = C0.slice(), whole = C0.slice();
      Cp.set(C0);
      const args = (C: Float32Array) => ({ transA: tA, transB: tB, M, N, K, alpha: 0.75, A, aOffset: off, lda, B, bOffset: off, ldb, beta: 1, C, cOffset: off, ldc });
      runJob(gemmJob(args(Cp), 2)!);
      serial(gemmJob(args(parts), 2)!);
      blasSgemm(tA, tB, M, N, K, 0.75, A, off, lda, B, off, ldb, 1, whole, off, ldc);
      const what = `${tA ? 'T' : 'N'}${tB ? 'T' : 'N'} ${M}x${N}x${K}`;
      assertBitEqual(Cp, parts, `${what}: pool vs serial parts`);
      let maxErr = 0;
      for (let i = 0; i < whole.length; i++) maxErr = Math.max(maxErr, Math.abs(Cp[i]! - whole[i]!));
      assert.ok(maxErr < 1e-5, `${what}: split vs whole differ by ${maxErr}`);
      for (let i = 0; i < off; i++) assert.equal(Cp[i], C0[i], `${what}: nothing written before the offset`);
      assert.ok(Cp.some((x, i) => x !== C0[i]), `${what}: C was written`);
    }
  }
});

test('an operand outside shared memory: the product runs in the calling thread, with the same result', async () => {
  await poolReady();
  const M = 256, N = 256, K = 64;
  const A = filled(new Float32Array(M * K), 7), B = shared(K * N, 8); // A is an ordinary array
  const viaEntry = new Float32Array(M * N), parts = new Float32Array(M * N), whole = new Float32Array(M * N);
  sgemm(false, false, M, N, K, 1, A, 0, K, B, 0, N, 0, viaEntry, 0, N);
  serial(gemmJob({ transA: false, transB: false, M, N, K, alpha: 1, A, aOffset: 0, lda: K, B, bOffset: 0, ldb: N, beta: 0, C: parts, cOffset: 0, ldc: N }, poolThreads())!);
  // The entry runs the job's parts here: the same OpenBLAS calls as running them directly, so the
  // same bits. The unsplit product is one call with another M, and OpenBLAS does not round a row the
  // same whatever the M of the call (it picks kernels and blocking by size): on the 2-core machine,
  // on one thread, one 256-row call and two 128-row calls differ in 3,525 of these 65,536 elements,
  // by up to 7e-7. So the unsplit product is compared within a tolerance, as in the test above.
  assertBitEqual(viaEntry, parts, 'unshared product vs its parts run here');
  blasSgemm(false, false, M, N, K, 1, A, 0, K, B, 0, N, 0, whole, 0, N);
  let maxErr = 0;
  for (let i = 0; i < whole.length; i++) maxErr = Math.max(maxErr, Math.abs(viaEntry[i]! - whole[i]!));
  assert.ok(maxErr < 1e-5, `split vs whole differ by ${maxErr}`);
  assert.ok(viaEntry.some((x) => x !== 0), 'C was written');
});

test("attention's items on the pool equal the same items run here, bit for bit (grouped heads, kept and recomputed probabilities)", async () => {
  await poolReady();
  const dims = { nHeads: 4, nKvHeads: 2, headDim: 16 };
  const seqs = [{ row0: 0, len: 70 }, { row0: 70, len: 33 }, { row0: 103, len: 90 }];
  const N = 193, qW = dims.nHeads * dims.headDim, kvW = dims.nKvHeads * dims.headDim;
  const q = shared(N * qW, 11), k = shared(N * kvW, 12), v = shared(N * kvW, 13), dout = shared(N * qW, 14);
  let probsSize = 0;
  for (const s of seqs) probsSize += dims.nHeads * s.len * s.len;
  for (const keep of [true, false]) {
    const outs = [0, 1].map(() => ({
      out: takeBuffer(N * qW), lse: takeBuffer(N * dims.nHeads), probs: keep ? takeBuffer(probsSize) : null,
      dq: takeBuffer(N * qW), dk: takeBuffer(N * kvW).fill(0), dv: takeBuffer(N * kvW).fill(0),
    }));
    outs.forEach((o, i) => {
      const fwd: AttentionJob = { kind: 'forward', dims, seqs, q, k, v, out: o.out, lse: o.lse, probs: o.probs };
      const bwd: AttentionJob = { kind: 'backward', dims, seqs, q, k, v, lse: o.lse, probs: o.probs, dout, dq: o.dq, dk: o.dk, dv: o.dv };
      if (i === 0) { runJob(attentionPoolJob(fwd)); runJob(attentionPoolJob(bwd)); } else { serial(attentionPoolJob(fwd)); serial(attentionPoolJob(bwd)); }
    });
    for (const key of ['out', 'lse', 'dq', 'dk', 'dv'] as const) assertBitEqual(outs[0]![key], outs[1]![key], `${key} (probabilities ${keep ? 'kept' : 'recomputed'})`);
    assert.ok(outs[0]!.dk.some((x) => x !== 0), 'dk was written');
  }
});

test("sampling's attention over cache slots: items on the pool equal the same items run here, bit for bit (decoded tokens and a prefill, grouped and multi-head)", async () => {
  await poolReady();
  // Three slots of 200 positions; two sequences decode one token after 150 and 90 cached ones, a third
  // is prefilled; then the decoded tokens alone (the score scratch lent is then sized by them alone).
  const maxCtx = 200;
  const mixed = [{ row0: 0, len: 1, past: 150, kRow0: 2 * maxCtx }, { row0: 1, len: 1, past: 90, kRow0: 0 }, { row0: 2, len: 40, past: 0, kRow0: maxCtx }];
  const decodeOnly = [{ row0: 0, len: 1, past: 190, kRow0: 2 * maxCtx }, { row0: 1, len: 1, past: 120, kRow0: 0 }];
  for (const [dims, seqs] of [[{ nHeads: 4, nKvHeads: 4, headDim: 32 }, decodeOnly], [{ nHeads: 9, nKvHeads: 3, headDim: 16 }, decodeOnly],
    [{ nHeads: 9, nKvHeads: 3, headDim: 16 }, mixed], [{ nHeads: 4, nKvHeads: 4, headDim: 32 }, mixed]] as const) {
    const qW = dims.nHeads * dims.headDim, kvW = dims.nKvHeads * dims.headDim;
    const N = 42;
    const q = shared(N * qW, 31), k = shared(3 * maxCtx * kvW, 32), v = shared(3 * maxCtx * kvW, 33);
    const outs = [0, 1].map(() => ({ out: takeBuffer(N * qW), lse: takeBuffer(N * dims.nHeads) }));
    outs.forEach((o, i) => {
      const job = attentionPoolJob({ kind: 'forward', dims, seqs: [...seqs], q, k, v, out: o.out, lse: o.lse, probs: null });
      if (i === 0) runJob(job); else serial(job);
    });
    // The scratch a job asks the pool to lend its workers is enough for each of its items (the pool
    // only ever grows what it lends, so run the items here with exactly that much).
    const job = attentionPoolJob({ kind: 'forward', dims, seqs: [...seqs], q, k, v, out: takeBuffer(N * qW), lse: takeBuffer(N * dims.nHeads), probs: null });
    const lent = job.scratchFloats!, areas: [Float32Array, Float32Array] = [takeBuffer(lent), takeBuffer(lent)];
    useScoreScratch((n) => {
      if (n > lent) throw new Error(`score scratch of ${lent} floats lent, ${n} needed`);
      return areas;
    });
    try { serial(job); } finally { useScoreScratch(ownScoreScratch); }
    assertBitEqual(outs[0]!.out, outs[1]!.out, `out (${dims.nHeads}/${dims.nKvHeads} heads, ${seqs.length} sequences)`);
    assertBitEqual(outs[0]!.lse, outs[1]!.lse, `lse (${dims.nHeads}/${dims.nKvHeads} heads, ${seqs.length} sequences)`);
  }
});

test("a decoding step's draws split across the pool equal sampleToken row by row, bit for bit (plain, top-k / top-p, greedy); invalid logits throw sampleToken's error", async () => {
  await poolReady();
  const rows = 24, V = 5000;
  const logits = takeBuffer(rows * V);
  for (let i = 0; i < rows * V; i++) logits[i] = 6 * Math.sin(i * 0.37 + Math.floor(i / V)) ** 3;
  for (const params of [{ temperature: 1, topP: 1, topK: 0 }, { temperature: 0.6, topP: 0.95, topK: 20 }, { temperature: 0, topP: 1, topK: 0 }]) {
    const gens = Array.from({ length: rows }, (_, i) => Rng.derive(9, i));
    const drawn = drawTokens(logits, rows, V, params, gens.map((g) => (params.temperature === 0 ? 0 : g.next())));
    const again = Array.from({ length: rows }, (_, i) => Rng.derive(9, i));
    for (let i = 0; i < rows; i++) {
      const ref = sampleToken(logits.subarray(i * V, (i + 1) * V), params, again[i]!);
      assert.equal(drawn[i]!.token, ref.token, `T ${params.temperature}, row ${i}: token`);
      assert.ok(Object.is(drawn[i]!.logprob, ref.logprob), `T ${params.temperature}, row ${i}: log-prob ${drawn[i]!.logprob} vs ${ref.logprob}`);
    }
    if (params.temperature > 0) assert.ok(new Set(drawn.map((d) => d.token)).size > 1, 'the rows drew different tokens');
  }
  logits[7 * V + 3] = Number.NaN;
  const params = { temperature: 1, topP: 1, topK: 0 };
  assert.throws(() => drawTokens(logits, rows, V, params, new Array<number>(rows).fill(0.5)), /logit 3 is NaN/);
});

test('SwiGLU and the token log-softmax split across the pool equal the whole kernels bit for bit', async () => {
  await poolReady();
  // The workers' SIMD scratch regions are arena blocks of this size: after a collection, blocks of
  // that class handed out here must be other blocks (filled with NaN, they would poison the kernels'
  // per-row statistics, which the workers copy through their scratch).
  gc();
  gc();
  await new Promise((r) => setTimeout(r, 50)); // finalisation callbacks run after the collection
  const decoys = Array.from({ length: 4 }, () => takeBuffer(SIMD_SCRATCH_BYTES / 4).fill(Number.NaN));
  const n = 70_000 + 6; // parts at multiples of 16, the last one not a whole number of vectors
  const g = shared(n, 21), u = shared(n, 22), dh = shared(n, 23);
  const [h1, s1, h2, s2] = [takeBuffer(n), takeBuffer(n), takeBuffer(n), takeBuffer(n)];
  swigluForwardRows(g, u, h1, n, s1);
  swigluForward(g, u, h2, n, s2);
  assertBitEqual(h1, h2, 'SwiGLU h');
  assertBitEqual(s1, s2, 'SwiGLU σ(g)');
  const [dg1, du1, dg2, du2] = [takeBuffer(n), takeBuffer(n), takeBuffer(n), takeBuffer(n)];
  swigluBackwardRows(dh, g, u, s1, dg1, du1, n);
  swigluBackward(dh, g, u, s1, dg2, du2, n);
  assertBitEqual(dg1, dg2, 'SwiGLU dg');
  assertBitEqual(du1, du2, 'SwiGLU du');

  const rows = 77, vocab = 1000;
  const logits = shared(rows * vocab, 31);
  for (let i = 0; i < logits.length; i++) logits[i]! *= 8;
  const tokens = sharedInts(rows);
  for (let r = 0; r < rows; r++) tokens[r] = (r * 37) % vocab;
  const dlp = sharedFloats(rows);
  for (let r = 0; r < rows; r++) dlp[r] = (r % 5) / 10 - 0.2;
  for (const temperature of [1, 0.7]) {
    const [p1, p2] = [logits.slice(), logits.slice()].map((a) => { const b = takeBuffer(a.length); b.set(a); return b; });
    const lp1 = sharedFloats(rows), lp2 = new Float32Array(rows);
    tokenLogprobsRows(p1!, rows, vocab, tokens, temperature, lp1);
    tokenLogprobs(p2!, rows, vocab, tokens, temperature, lp2);
    assertBitEqual(lp1, lp2, `log-probs at T=${temperature}`);
    assertBitEqual(p1!, p2!, `probabilities at T=${temperature}`);
    tokenLogprobsBackwardRows(p1!, rows, vocab, tokens, temperature, dlp);
    tokenLogprobsBackward(p2!, rows, vocab, tokens, temperature, dlp);
    assertBitEqual(p1!, p2!, `dlogits at T=${temperature}`);
    assert.ok(lp1.every(Number.isFinite), 'finite log-probs');
  }
  assert.ok(decoys.every((d) => d.every(Number.isNaN)), 'no worker wrote into buffers handed out here');
});

// Last: it stops the pool for the rest of this process.
test('a worker that fails is reported, and the engine goes on with OpenBLAS threads', async () => {
  await poolReady();
  let ran = 0;
  const bad: PoolJob = {
    kind: 99 as JobKind, // no worker knows it: decoding throws there
    items: 40,
    arrays: () => [],
    encode: (w) => w.int(0),
    run: () => {
      const t0 = performance.now();
      while (performance.now() - t0 < 5) { /* long enough for the worker to wake and fail */ }
      ran++;
    },
  };
  const stderr: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => { stderr.push(String(s)); return true; }) as typeof process.stderr.write;
  try {
    assert.throws(() => runJob(bad), /thread pool: worker 0: Error: unknown job kind 99/);
  } finally {
    process.stderr.write = write;
  }
  assert.equal(ran, 40, 'this thread ran every item the worker did not take');
  assert.match(stderr.join(''), /worker threads stopped .*OpenBLAS's threads are used from now on/);
  assert.equal(workersReady(), false);
  assert.equal(poolThreads(), 1);
  assert.equal(blasInfo().threads, 2, 'OpenBLAS has the threads again');
  // Products still work, on OpenBLAS's threads.
  const A = shared(128 * 64, 41), B = shared(64 * 96, 42), C = takeBuffer(128 * 96), D = new Float32Array(128 * 96);
  sgemm(false, false, 128, 96, 64, 1, A, 0, 64, B, 0, 96, 0, C, 0, 96);
  blasSgemm(false, false, 128, 96, 64, 1, A, 0, 64, B, 0, 96, 0, D, 0, 96);
  assertBitEqual(C, D, 'product after the fallback');
});

test('a process that ends while its workers start waits for them (a worker ended inside koffi\'s start aborts the process)', { skip: poolThreads() < 2 && 'one thread: no workers' }, async () => {
  const { spawnSync } = await import('node:child_process');
  // The pool is started and the script ends at once: the event loop empties while the workers load.
  const script = "import('./src/engine/embedded/thread-pool.ts').then((m) => { m.poolThreads(); process.on('exit', () => console.log(JSON.stringify({ ready: m.workersReady() }))); })";
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, MARFT_THREADS: '2' } });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!), { ready: true });
  }
});
