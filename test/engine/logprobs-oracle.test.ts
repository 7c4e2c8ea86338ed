// Per-token log-probs of the embedded engine against transformers (and PEFT for an adapter), on tiny
// random checkpoints with every weight perturbed (issue 2: within 1e-4).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../src/engine/index.ts';
import { checkpointDir, checkpointJobs, maxAbsDiff, oracleBatch, readJson, skipWithoutVenv, tempDir, testSequences, type TinyArch } from './oracle-helpers.ts';

const sequences = testSequences(97, [17, 5, 40, 2, 23], 7);
const archs: TinyArch[] = ['qwen2', 'qwen3', 'llama'];
const refs = new Map<string, number[][]>();
const adapterDir = tempDir('peft-adapter');

before(() => {
  if (skipWithoutVenv) return;
  const jobs = [
    ...checkpointJobs(archs),
    ...archs.map((arch) => ({ cmd: 'logprobs', model: checkpointDir(arch), input: sequences, outName: `${arch}.json` })),
    { cmd: 'make-lora', model: checkpointDir('qwen2'), out: adapterDir, rank: 4, alpha: 8, seed: 3 },
    { cmd: 'logprobs', model: checkpointDir('qwen2'), adapter: adapterDir, input: sequences, outName: 'peft.json' },
  ];
  const outs = oracleBatch(jobs);
  jobs.forEach((j, i) => { if (j.outName) refs.set(j.outName, readJson<{ logprobs: number[][] }>(outs[i]!).logprobs); });
});

for (const arch of archs) {
  test(`${arch}: per-token log-probs match transformers within 1e-4`, { skip: skipWithoutVenv }, async () => {
    const ref = refs.get(`${arch}.json`)!;
    const engine = await loadEngine(checkpointDir(arch));
    const out = await engine.forward({ kind: 'base' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })));
    const diff = maxAbsDiff(out.logprobs!, ref);
    assert.ok(diff < 1e-4, `max |Δ logprob| = ${diff}`);
    // scoreFrom > 1 returns the tail of the same numbers.
    const tail = await engine.forward({ kind: 'base' }, [{ tokens: sequences[2]!, scoreFrom: 30 }]);
    assert.equal(tail.logprobs![0]!.length, 10);
    assert.ok(maxAbsDiff(tail.logprobs!, [ref[2]!.slice(29)]) < 1e-4);
  });
}

test('PEFT LoRA adapter with non-zero B: log-probs match PEFT within 1e-4', { skip: skipWithoutVenv }, async () => {
  const ref = refs.get('peft.json')!;
  const engine = await loadEngine(checkpointDir('qwen2'));
  await engine.loadAdapter('peft', adapterDir);
  const out = await engine.forward({ kind: 'adapter', name: 'peft' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })));
  const diff = maxAbsDiff(out.logprobs!, ref);
  assert.ok(diff < 1e-4, `max |Δ logprob| = ${diff}`);
  // The adapter really changes the model (so the comparison above is not the base's).
  assert.ok(maxAbsDiff(ref, refs.get('qwen2.json')!) > 1e-2);
});
