// `marft logprobs`: output lines equal the engine's scoring forward; user mistakes give one line and exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import { maxAbsDiff, repoRoot, tempDir } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 40, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 64, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [0],
};

function cli(args: string[], stdin?: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(repoRoot, 'bin/marft.mjs'), 'logprobs', ...args], { encoding: 'utf8', input: stdin });
}

test('marft logprobs prints the engine log-probs per input line, with and without an adapter', async () => {
  const dir = tempDir('cli');
  const e = createEngine(cfg, { seed: 2 });
  await e.saveBase(join(dir, 'model'));
  await e.createAdapter('a', { rank: 2, alpha: 4, targetModules: [...ALL_LINEAR_MODULES] }, 3);
  await e.saveAdapter('a', join(dir, 'adapter'));
  const seqs = [[1, 2, 3, 4, 5, 6, 7], [9, 8], [5]];
  writeFileSync(join(dir, 'in.jsonl'), seqs.map((tokens) => JSON.stringify({ tokens })).join('\n') + '\n');
  const expected = await e.forward({ kind: 'base' }, seqs.map((tokens) => ({ tokens, scoreFrom: 1 })));
  for (const extra of [[], ['--adapter', join(dir, 'adapter')]]) {
    const r = cli(['--model', join(dir, 'model'), '--input', join(dir, 'in.jsonl'), ...extra]);
    assert.equal(r.status, 0, r.stderr);
    const got = r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { logprobs: number[] }).logprobs);
    assert.deepEqual(got.map((g) => g.length), [6, 1, 0]);
    assert.ok(maxAbsDiff(got, expected.logprobs!) < 1e-6); // the new adapter has B = 0
  }
});

test('marft logprobs: clear one-line errors for bad paths and bad lines', async () => {
  const dir = tempDir('cli-err');
  await createEngine(cfg, { seed: 1 }).saveBase(join(dir, 'model'));
  const model = ['--model', join(dir, 'model'), '--input', '-'];
  const cases: [string[], string | undefined, RegExp][] = [
    [['--model', join(dir, 'nope'), '--input', '-'], '', /no such folder/],
    [['--input', '-'], '', /--model is required/],
    [model, '{"tokens": [1, 2]}\nnot json\n', /line 2: not valid JSON/],
    [model, '{"tokens": [1, 99]}\n', /token 99 is not an id in \[0, 40\)/],
    [model, '{"toks": [1]}\n', /expected \{"tokens"/],
    [[...model, '--adapter', dir], '', /not a PEFT adapter folder/],
  ];
  for (const [args, stdin, re] of cases) {
    const r = cli(args, stdin);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
