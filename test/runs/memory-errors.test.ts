// A step that runs out of memory is one line naming the step, what the engine said and the keys that
// size the batch, for each engine's way of saying it; other errors stay what they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Engine } from '../../src/engine/types.ts';
import { MemoryExhaustedError } from '../../src/runs/memory-errors.ts';
import { guardedStep } from '../../src/runs/step-guard.ts';
import { tabularConfig } from './reliability-fixtures.ts';

// The guard asks the engine whether the parameters are still finite only for errors that are not memory.
const engine = { score: async () => { throw new Error('not asked'); } } as unknown as Engine;
const trainables = { adapters: ['policy'], critics: ['critic'] };

test('each engine\'s out-of-memory report becomes the step\'s one-line MemoryExhaustedError naming the batch keys', async () => {
  const config = tabularConfig({ train: { microBatchTokens: 4096 }, rollout: { batchSize: 64, rolloutsPerPrompt: 2, maxNewTokens: 8 } });
  const reports = [
    'Array buffer allocation failed',
    'Invalid typed array length: 68719476736',
    'torch engine: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 139.72 GiB of which 1.2 GiB is free.',
    'torch engine: torch.OutOfMemoryError: CUDA out of memory.',
    "torch engine: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 1099511627776 bytes.",
    'torch engine: MemoryError',
    "out of memory, foreseen: the sampling batch's key/value cache needs 9,000 MB (256 sequences × 4,608 positions) and 4,000 MB are available",
  ];
  for (const report of reports) {
    const err = await guardedStep(4, config, engine, trainables, async () => { throw new RangeError(report); }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof MemoryExhaustedError, `${report}: ${String(err)}`);
    assert.equal(err.step, 4);
    assert.doesNotMatch(err.message, /\n/);
    assert.match(err.message, /^step 4 ran out of memory \(.+\): the configured batch does not fit; lower train\.microBatchTokens \(now 4096: the tokens of one forward and backward pass\), rollout\.batchSize \(now 64\) × rollout\.rolloutsPerPrompt \(now 2\) or rollout\.maxNewTokens \(now 8\); nothing of this step was kept$/);
  }
});

test('errors that are not memory stay what they are (a small invalid length is a bug, not a full machine)', async () => {
  for (const message of ['Invalid typed array length: -1', 'ENOENT: no such file or directory']) {
    const err = await guardedStep(0, tabularConfig(), engine, trainables, async () => { throw new Error(message); }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof Error && !(err instanceof MemoryExhaustedError) && err.message === message, String(err));
  }
});
