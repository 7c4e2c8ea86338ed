// The trainer's samples files (src/train/samples.ts into src/runs/samples.ts's format): every
// log.samplesEvery steps and at the last, the first log.samplesEpisodes episodes of the batch with
// each action's tokens, behaviour log-probs, placed reward, critic value and the advantages the update used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRun } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';
import { readStepSamples, sampleSteps } from '../../src/runs/samples.ts';
import { tabularConfig } from '../runs/reliability-fixtures.ts';

test('a run writes samples every log.samplesEvery steps and at its last, with the credit its update used', { timeout: 120_000 }, async () => {
  const config = tabularConfig({ train: { steps: 5, checkpointEvery: 5 }, log: { samplesEvery: 2, samplesEpisodes: 3 }, advantage: { normaliseAdvantages: false } });
  const runDir = mkdtempSync(join(tmpdir(), 'marft-samples-'));
  const { bundle, engine } = await buildRun(config, runDir);
  const result = await train({ config, engine, task: bundle.task, runDir, progress: false });
  assert.deepEqual(await sampleSteps(runDir), [0, 2, 4]);
  const episodes = await readStepSamples(runDir, 2);
  assert.equal(episodes.length, 3);
  for (const e of episodes) {
    assert.equal(e.step, 2);
    assert.deepEqual(e.actions.map((a) => a.agent), bundle.task.agents);
    for (const a of e.actions) {
      assert.equal(a.tokens.length, 1);
      assert.equal(a.pieces.length, 1);
      assert.equal(a.logprobs.length, 1);
      assert.equal(typeof a.value, 'number', 'MARFT has a critic');
      assert.equal(a.advantages!.length, a.tokens.length, 'the action-level advantage for each of its tokens');
      assert.equal(a.teacherGap, null);
    }
    // The step-end placement: the team reward at the step's last action, none before it.
    assert.equal(e.actions[0]!.reward, 0);
    assert.equal(e.actions[1]!.reward, e.outcome);
  }
  assert.equal(result.metrics.length, 5);
});

test('log.samplesEvery 0 writes none', { timeout: 120_000 }, async () => {
  const config = tabularConfig({ train: { steps: 2, checkpointEvery: 2 }, log: { samplesEvery: 0 } });
  const runDir = mkdtempSync(join(tmpdir(), 'marft-samples-none-'));
  const { bundle, engine } = await buildRun(config, runDir);
  await train({ config, engine, task: bundle.task, runDir, progress: false });
  assert.deepEqual(await sampleSteps(runDir), []);
});
