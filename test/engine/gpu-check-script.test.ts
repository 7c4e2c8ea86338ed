// bench/gpu-check.py (the one-GPU check of docs/performance.md) cannot run here, but its code path can:
// with the tiny shape on the CPU it builds, loads, trains and samples through the torch engine's Python
// code and prints its JSON report, so the script is known to work when a GPU session runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { defaultTorchPython, repoRoot } from '../../src/engine/torch/worker-process.ts';
import { skipWithoutTorch } from './torch-helpers.ts';

test('bench/gpu-check.py --shape tiny on the CPU: a finite report of training and sampling', { skip: skipWithoutTorch, timeout: 120_000 }, () => {
  const python = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
  const out = execFileSync(python, [join(repoRoot, 'bench/gpu-check.py'), '--shape', 'tiny', '--device', 'cpu', '--dtype', 'float32',
    '--batch', '2', '--seq-len', '48', '--steps', '2', '--sample-batch', '2', '--prompt-len', '8', '--new-tokens', '6'],
  { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' }, stdio: ['ignore', 'pipe', 'ignore'] });
  const r = JSON.parse(out.trim().split('\n').pop()!);
  assert.equal(r.shape, 'tiny');
  assert.equal(r.device, 'cpu');
  assert.equal(r.train.grad_norm_finite, true);
  assert.ok(r.train.tokens_per_s > 0 && Number.isFinite(r.train.tokens_per_s));
  assert.equal(r.sample.generated, 12);
  assert.ok(r.sample.tokens_per_s > 0 && Number.isFinite(r.sample.tokens_per_s));
});
