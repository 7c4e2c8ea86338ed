// Repeatability inside one process with the thread pool on: the first sampling call of a process gives
// the same tokens and log-probs, bit for bit, as the same call made again, and a second engine created
// in the same process computes the same log-probs, gradient norm and update as the first. Both once
// differed in the last bits (a gradient norm 1e-7 relative, an importance weight 0.99999994): the
// products run before the pool started went to OpenBLAS at its starting thread count, which rounds
// differently from the one thread it is held at afterwards (thread-pool.ts settleBlasThreads).
// Each scenario runs as the first engine work of a fresh process (determinism-child.ts), with two
// engine threads and OpenBLAS starting at two, whatever the machine has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const child = fileURLToPath(new URL('./determinism-child.ts', import.meta.url));

interface ChildOutput {
  runs: [unknown, unknown];
  backend: string;
  poolThreads: number;
  blasThreadsAtStart: number;
  blasThreads: number;
}

function runScenario(scenario: string): ChildOutput {
  const env: NodeJS.ProcessEnv = { ...process.env, MARFT_THREADS: '2', OPENBLAS_NUM_THREADS: '2' };
  for (const name of ['MARFT_SIMD', 'MARFT_WASM_ARENA_MB', 'OMP_NUM_THREADS']) delete env[name];
  const out = execFileSync(process.execPath, ['--import', 'tsx', child, scenario], { cwd: repo, env, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as ChildOutput;
}

/** Every number in a result, in order (tokens, log-probs, norms). */
function numbers(x: unknown): number[] {
  if (typeof x === 'number') return [x];
  if (Array.isArray(x)) return x.flatMap(numbers);
  if (x && typeof x === 'object') return Object.values(x).flatMap(numbers);
  return [];
}

function assertBitEqual(out: ChildOutput, what: string): void {
  // The setup that showed the difference: OpenBLAS starting at two threads, the pool holding it at one.
  if (out.backend === 'openblas') assert.equal(out.blasThreadsAtStart, 2, 'OpenBLAS starts at OPENBLAS_NUM_THREADS');
  assert.equal(out.blasThreads, 1, 'OpenBLAS is held at one thread while the pool runs');
  const a = numbers(out.runs[0]), b = numbers(out.runs[1]);
  assert.equal(a.length, b.length, what);
  assert.ok(a.length > 100, `${what}: only ${a.length} numbers compared`);
  let differ = 0, worst = 0;
  for (let i = 0; i < a.length; i++) {
    if (Object.is(a[i], b[i])) continue;
    differ++;
    worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / Math.abs(a[i]!));
  }
  assert.equal(differ, 0, `${what}: ${differ} of ${a.length} numbers differ (largest relative difference ${worst.toExponential(2)})`);
}

test('the first sampling call of a process gives, bit for bit, what the same call gives later (thread pool on)', { timeout: 120_000 }, (t) => {
  const out = runScenario('sample-twice');
  if (out.poolThreads !== 2) return t.skip('no thread pool here (Apple Accelerate, or no WebAssembly SIMD)');
  assertBitEqual(out, 'first and second sampling call');
});

test('a second engine in the same process computes the same log-probs, gradient norm and update as the first (thread pool on)', { timeout: 120_000 }, (t) => {
  const out = runScenario('second-engine');
  if (out.poolThreads !== 2) return t.skip('no thread pool here (Apple Accelerate, or no WebAssembly SIMD)');
  assertBitEqual(out, 'first and second engine');
});
