// `marft logprobs --engine torch` prints what `--engine embedded` prints, within 1e-4, with an adapter
// (non-zero B) at a temperature (one worker start; the base alone is the conformance tests' subject);
// a wrong --engine is a one-line usage error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { randomWeights } from '../../src/engine/embedded/weights.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { maxAbsDiff, repoRoot, tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch } from './torch-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen2', vocabSize: 40, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 64, tieWordEmbeddings: true,
  attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [0],
};

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(repoRoot, 'bin/marft.mjs'), 'logprobs', ...args], {
    encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: '1' },
  });
}

function lines(stdout: string): number[][] {
  return stdout.trim().split('\n').map((l) => (JSON.parse(l) as { logprobs: number[] }).logprobs);
}

test('marft logprobs --engine torch agrees with the embedded engine', { skip: skipWithoutTorch }, async () => {
  const dir = tempDir('torch-cli');
  const e = new EmbeddedEngine(cfg, randomWeights(cfg, 4));
  await e.saveBase(join(dir, 'model'));
  await e.createAdapter('a', { rank: 2, alpha: 4, targetModules: [...ALL_LINEAR_MODULES] }, 3);
  for (const layer of e.getAdapter('a').layers) for (const m of Object.values(layer)) m.B.data.forEach((_, i, b) => { b[i] = 0.2 * Math.sin(i + 1); });
  await e.saveAdapter('a', join(dir, 'adapter'));
  const seqs = [[1, 2, 3, 4, 5, 6, 7], [9, 8], [5], [3, 3, 3, 3, 30, 31]];
  writeFileSync(join(dir, 'in.jsonl'), seqs.map((tokens) => JSON.stringify({ tokens })).join('\n') + '\n');
  const base = ['--model', join(dir, 'model'), '--input', join(dir, 'in.jsonl')];
  for (const extra of [['--adapter', join(dir, 'adapter'), '--temperature', '0.8']]) {
    const emb = cli([...base, ...extra]);
    const tor = cli([...base, ...extra, '--engine', 'torch']);
    assert.equal(emb.status, 0, emb.stderr);
    assert.equal(tor.status, 0, tor.stderr);
    const a = lines(emb.stdout), b = lines(tor.stdout);
    assert.deepEqual(b.map((x) => x.length), [6, 1, 0, 5]);
    const d = maxAbsDiff(a, b);
    assert.ok(d < 1e-4, `max |Δ logprob| = ${d}`);
    assert.ok(maxAbsDiff(a, lines(cli(base).stdout)) > 1e-3, 'the adapter and the temperature change the log-probs');
  }
  const bad = cli([...base, '--engine', 'vllm']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--engine must be embedded or torch, got 'vllm'/);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
});
