// Memory foreseen (issue 22): the embedded engine refuses a key/value cache or a logits buffer larger
// than the memory available before allocating it (src/engine/embedded/memory-budget.ts), and the
// command says so in one line, the run folder left as a fresh run can use it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { availableMemoryBytes, reserveMemory } from '../../src/engine/embedded/memory-budget.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
const example = new URL('../../examples/coordination-embedded.yaml', import.meta.url).pathname;
const MB = 1024 * 1024;

test('reserveMemory: refuses more than the limit, allows it under off, never refuses a size granted before', () => {
  assert.throws(() => reserveMemory('cache a', 64 * MB, '8 sequences × 4 positions', { MARFT_MEMORY_LIMIT_MB: '1' }),
    /^RangeError: out of memory, foreseen: cache a needs 64 MB \(8 sequences × 4 positions\) and 0 MB are available$/);
  assert.doesNotThrow(() => reserveMemory('cache a', 64 * MB, '', { MARFT_MEMORY_LIMIT_MB: 'off' }));
  // Granted once under a generous limit, the same size (and smaller) passes under any limit after:
  // the earlier buffer may still hold that memory.
  reserveMemory('cache b', 2 * MB, '', { MARFT_MEMORY_LIMIT_MB: '100000' });
  assert.doesNotThrow(() => reserveMemory('cache b', 2 * MB, '', { MARFT_MEMORY_LIMIT_MB: '1' }));
  assert.doesNotThrow(() => reserveMemory('cache b', MB, '', { MARFT_MEMORY_LIMIT_MB: '1' }));
  assert.throws(() => reserveMemory('cache b', 3 * MB, '', { MARFT_MEMORY_LIMIT_MB: '1' }), /cache b needs 3 MB .* and 2 MB are available/);
  assert.throws(() => availableMemoryBytes({ MARFT_MEMORY_LIMIT_MB: 'lots' }), /MARFT_MEMORY_LIMIT_MB: got "lots", expected a positive number of megabytes or 'off'/);
  // On Linux the kernel's figure bounds it even without the variable.
  if (process.platform === 'linux') assert.ok((availableMemoryBytes({}) ?? 0) > 0);
});

test('marft train with too little memory for the sampling batch: one line naming the cache and the keys, exit 2, and the run folder trains afterwards', { timeout: 120_000 }, () => {
  const run = join(mkdtempSync(join(tmpdir(), 'marft-memory-')), 'run');
  const short = spawnSync(process.execPath, [cli, 'train', example, '--run-dir', run, '--no-progress', '--set', 'train.steps=2'], { encoding: 'utf8', env: { ...process.env, MARFT_MEMORY_LIMIT_MB: '1' } });
  assert.equal(short.status, 2, short.stderr);
  const lines = short.stderr.trim().split('\n');
  assert.equal(lines.length, 1, short.stderr);
  assert.match(lines[0]!, /^marft train: ran out of memory \(out of memory, foreseen: the sampling batch's key\/value cache needs \d+ MB \(64 sequences × \d+ positions\) and 0 MB are available\): .*rollout\.batchSize × rollout\.rolloutsPerPrompt.*rollout\.maxNewTokens/);
  assert.ok(!readdirSync(run).includes('checkpoints') || readdirSync(join(run, 'checkpoints')).length === 0);
  const again = spawnSync(process.execPath, [cli, 'train', example, '--run-dir', run, '--no-progress', '--set', 'train.steps=2'], { encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /"steps":2/);
});
