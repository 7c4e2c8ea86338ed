// model.maxSequences, the embedded engine's continuous-batching cap as a configuration key: it reaches
// the engine whether the model comes from model.path or is built by the task, at most that many
// sequences are then decoded in one pass, and other engines refuse it in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { buildRun } from '../../src/run/setup.ts';
import { EmbeddedEngine } from '../../src/engine/embedded/engine.ts';
import type { SeqSpan } from '../../src/engine/embedded/decoder-layer.ts';
import type { Engine } from '../../src/engine/types.ts';

const task = { name: 'workflow', options: { dataset: 'gsm8k', workflow: 'duo', heldOutFraction: 0.5 } };

/** The largest number of sequences one forward pass of `engine` decodes while it samples 5 requests. */
async function widestPass(engine: Engine): Promise<number> {
  assert.ok(engine instanceof EmbeddedEngine);
  const passes: SeqSpan[][] = [];
  const forward = engine.model.forward.bind(engine.model);
  engine.model.forward = (tokens, seqs, ...rest) => { passes.push(seqs); return forward(tokens, seqs, ...rest); };
  await engine.sample({ kind: 'base' }, [[5, 6], [7], [8, 9, 10], [11], [12, 13]], { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4, stopTokenIds: [], stopStrings: [], seed: 1 });
  return Math.max(...passes.map((p) => p.length));
}

test('model.maxSequences reaches a task-built embedded engine and caps the sequences in flight', async () => {
  const capped = await buildRun(parseConfig({ task, model: { maxSequences: 2 } }));
  try {
    assert.equal((capped.engine as EmbeddedEngine).generateOptions.maxSequences, 2);
    assert.equal(await widestPass(capped.engine), 2);
  } finally {
    await capped.engine.dispose();
  }
  const uncapped = await buildRun(parseConfig({ task }));
  try {
    assert.equal(await widestPass(uncapped.engine), 5);
  } finally {
    await uncapped.engine.dispose();
  }
});

test('model.maxSequences reaches an engine opened from model.path (and from the run’s saved base)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-max-seq-'));
  try {
    // The task's model saved as the run's base, then opened as model.path by a second configuration.
    const first = await buildRun(parseConfig({ task }), join(dir, 'run'));
    await first.engine.dispose();
    const fromBase = await buildRun(parseConfig({ task, model: { maxSequences: 3 } }), join(dir, 'run'));
    try {
      assert.equal(await widestPass(fromBase.engine), 3);
    } finally {
      await fromBase.engine.dispose();
    }
    const fromPath = await buildRun(parseConfig({ task: { ...task, options: { ...task.options, tokenizer: 'char' } }, model: { path: join(dir, 'run', 'base'), maxSequences: 1 } }));
    try {
      assert.equal(await widestPass(fromPath.engine), 1);
    } finally {
      await fromPath.engine.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('model.maxSequences with another engine is refused in one line', () => {
  assert.throws(() => parseConfig({ task, model: { engine: 'torch', maxSequences: 4 } }), /model: maxSequences: the embedded engine's option \(model\.engine is torch\); leave it at 0$/);
  assert.throws(() => parseConfig({ task, model: { maxSequences: -1 } }), /model\.maxSequences/);
});
