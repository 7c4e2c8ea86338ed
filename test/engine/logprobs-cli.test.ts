// `marft logprobs`: output lines equal the engine's scoring forward; user mistakes give one line and exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { ALL_LINEAR_MODULES } from '../../src/engine/types.ts';
import type { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, readJson, repoRoot, skipWithoutVenv, tempDir, testSequences } from './oracle-helpers.ts';

const cfg: ModelConfig = {
  architecture: 'qwen3', vocabSize: 40, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 64, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [0],
};

function cli(args: string[], stdin?: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(repoRoot, 'bin/marft.mjs'), 'logprobs', ...args], { encoding: 'utf8', input: stdin });
}

function logprobsOf(stdout: string): number[][] {
  return stdout.trim().split('\n').map((l) => (JSON.parse(l) as { logprobs: number[] }).logprobs);
}

test('marft logprobs prints the engine log-probs per input line, with and without an adapter (non-zero B)', async () => {
  const dir = tempDir('cli');
  const e = createEngine(cfg, { seed: 2 }) as EmbeddedEngine;
  await e.saveBase(join(dir, 'model'));
  await e.createAdapter('a', { rank: 2, alpha: 4, targetModules: [...ALL_LINEAR_MODULES] }, 3);
  // A new adapter has B = 0 and equals the base; give it a B that changes the model, as training would.
  e.getAdapter('a').layers.forEach((layer, i) => Object.values(layer).forEach((m, j) => {
    for (let k = 0; k < m.B.data.length; k++) m.B.data[k] = 2 * Math.sin(1 + i + 3 * j + 0.7 * k);
  }));
  await e.saveAdapter('a', join(dir, 'adapter'));
  const seqs = [[1, 2, 3, 4, 5, 6, 7], [9, 8], [5]];
  writeFileSync(join(dir, 'in.jsonl'), seqs.map((tokens) => JSON.stringify({ tokens })).join('\n') + '\n');
  const requests = seqs.map((tokens) => ({ tokens, scoreFrom: 1 }));
  const base = (await e.forward({ kind: 'base' }, requests)).logprobs!;
  const withAdapter = (await e.forward({ kind: 'adapter', name: 'a' }, requests)).logprobs!;
  assert.ok(maxAbsDiff(withAdapter, base) > 1e-3, 'the adapter must change the log-probs');
  for (const [extra, expected] of [[[], base], [['--adapter', join(dir, 'adapter')], withAdapter]] as const) {
    const r = cli(['--model', join(dir, 'model'), '--input', join(dir, 'in.jsonl'), ...extra]);
    assert.equal(r.status, 0, r.stderr);
    const got = logprobsOf(r.stdout);
    assert.deepEqual(got.map((g) => g.length), [6, 1, 0]);
    assert.ok(maxAbsDiff(got, expected) < 1e-6, `${extra.join(' ') || 'base'}: max diff ${maxAbsDiff(got, expected)}`);
  }
});

test('marft logprobs --adapter with a PEFT adapter (non-zero A and B) prints PEFT\'s log-probs', { skip: skipWithoutVenv }, () => {
  const dir = tempDir('cli-peft');
  const model = checkpointDir('llama'), adapter = join(dir, 'peft-lora');
  const seqs = testSequences(97, [9, 2, 17], 41);
  const [viaPeft, viaBase] = oracleBatch([
    ...checkpointJobs(['llama']),
    { cmd: 'make-lora', model, out: adapter, rank: 4, alpha: 8, seed: 5 },
    { cmd: 'logprobs', model, adapter, input: seqs, outName: 'peft.json' },
    { cmd: 'logprobs', model, input: seqs, outName: 'base.json' },
  ]).slice(-2).map((f) => readJson<{ logprobs: number[][] }>(f!).logprobs);
  writeFileSync(join(dir, 'in.jsonl'), seqs.map((tokens) => JSON.stringify({ tokens })).join('\n') + '\n');
  const r = cli(['--model', model, '--adapter', adapter, '--input', join(dir, 'in.jsonl')]);
  assert.equal(r.status, 0, r.stderr);
  const got = logprobsOf(r.stdout);
  assert.ok(maxAbsDiff(got, viaPeft!) < 1e-4, `vs PEFT: max diff ${maxAbsDiff(got, viaPeft!)}`);
  assert.ok(maxAbsDiff(got, viaBase!) > 1e-2, 'the adapter must change the log-probs');
});

test('marft logprobs: an input line longer than the model\'s context is a one-line error (exit 2); exactly the context is fine', async () => {
  const dir = tempDir('cli-long');
  await createEngine(cfg, { seed: 1 }).saveBase(join(dir, 'model'));
  const ctx = cfg.maxPositionEmbeddings;
  const line = (n: number): string => JSON.stringify({ tokens: Array.from({ length: n }, (_, i) => i % cfg.vocabSize) });
  const full = cli(['--model', join(dir, 'model'), '--input', '-'], `${line(ctx)}\n`);
  assert.equal(full.status, 0, full.stderr);
  assert.equal(logprobsOf(full.stdout)[0]!.length, ctx - 1);
  const r = cli(['--model', join(dir, 'model'), '--input', '-'], `${line(3)}\n${line(ctx + 1)}\n`);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`input line 2: ${ctx + 1} tokens exceed the model's context of ${ctx}`));
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
