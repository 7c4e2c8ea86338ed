// The findings of issue 12 (item 5), through the real CLI: each is now exit code 2 with one line on
// stderr that says what is wrong, no stack trace, and no side effect (nothing trained, nothing printed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import type { ModelConfig } from '../../src/engine/types.ts';
import { assertUserError, runAll, type CliCall } from './spawn-cli.ts';

const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;

const tinyQwen3: ModelConfig = {
  architecture: 'qwen3', vocabSize: 40, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 1e6, maxPositionEmbeddings: 64, tieWordEmbeddings: false,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [0],
};

/** Overwrites one F32 tensor of a saved model.safetensors with NaN (weights a diverged training could leave). */
function poisonTensor(file: string, name: string): void {
  const bytes = readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const entry = header[name]!;
  assert.equal(entry.dtype, 'F32');
  const [from, to] = entry.data_offsets;
  for (let at = 8 + headerLength + from; at < 8 + headerLength + to; at += 4) bytes.writeFloatLE(NaN, at);
  writeFileSync(file, Uint8Array.from(bytes));
}

test('the findings of issue 12: exit code 2, one line, no stack trace, nothing trained or printed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-findings-'));
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const run = join(dir, 'run');
  const model = join(dir, 'model');
  const nanModel = join(dir, 'nan-model');
  await createEngine(tinyQwen3, { seed: 1 }).saveBase(model);
  await createEngine(tinyQwen3, { seed: 1 }).saveBase(nanModel);
  poisonTensor(join(nanModel, 'model.safetensors'), 'model.norm.weight');
  const input = file('in.jsonl', '{"tokens": [1, 2, 3]}\n');

  const cases: [string, CliCall, RegExp][] = [
    ['batchSize: 1e9 (a native crash, exit 133)', { args: ['train', file('big.yaml', 'task: { name: bandit }\nmodel: { engine: tabular }\nrollout: { batchSize: 1e9 }\n'), '--run-dir', run] },
      /^marft train: .*big\.yaml: rollout\.batchSize: got 1000000000, expected an integer in \[1, 65536\] \(the episodes of one step are held in memory together\)$/],
    ['an empty config (trained 100 steps of defaults)', { args: ['train', file('empty.yaml', ''), '--run-dir', run] }, /^marft train: .*empty\.yaml: the config is empty: it must name at least task\.name/],
    ['a config of comments only', { args: ['train', file('comments.yaml', '# to do\n'), '--run-dir', run] }, /comments\.yaml: the config is empty/],
    ['--run-dir --no-progress (trained into a folder named "--no-progress")', { args: ['train', example, '--run-dir', '--no-progress'], cwd: dir },
      /^marft train: --run-dir needs a value, got the flag --no-progress/],
    ['a non-finite lr (reported as "got null")', { args: ['train', file('nan.yaml', 'task: { name: bandit }\nactor: { optim: { lr: .nan } }\n'), '--run-dir', run] },
      /^marft train: .*nan\.yaml: actor\.optim\.lr: got NaN, expected a finite number >= 0$/],
    ['logprobs on NaN weights (printed nulls, exit 0)', { args: ['logprobs', '--model', nanModel, '--input', input] },
      /^marft logprobs: input line 1: the log-prob of tokens\[1\] is NaN, not a finite number: the model gives non-finite outputs/],
    ['--temperature Infinity (a stack trace)', { args: ['logprobs', '--model', model, '--input', input, '--temperature', 'Infinity'] }, /^marft logprobs: --temperature must be a finite number, got 'Infinity'$/],
    ['--temperature abc', { args: ['logprobs', '--model', model, '--input', input, '--temperature', 'abc'] }, /^marft logprobs: --temperature must be a number, got 'abc'$/],
    ['--input a directory (a stack trace)', { args: ['logprobs', '--model', model, '--input', dir] }, /^marft logprobs: --input .*: is a folder, not a file$/],
  ];
  const results = await runAll(cases.map(([, call]) => call));
  cases.forEach(([what, , message], i) => {
    assertUserError(results[i]!, message, what);
    assert.equal(results[i]!.stdout, '', `${what}: printed ${results[i]!.stdout}`);
  });
  assert.ok(!existsSync(run), 'a run folder was created');
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('-')), [], 'a folder named after a flag');
});
