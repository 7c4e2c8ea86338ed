// advantage.baseline: exact (the task's exact state values in place of the critic's, relay-game),
// the learned critic measured against them (explained_variance_exact), and advantage.whitenBy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { planFor } from '../../src/algorithms/check.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { train } from '../../src/run/train.ts';
import { normaliseAdvantages, type TrainAction } from '../../src/train/batch.ts';
import { relayGame } from '../../src/tasks/toy/relay-game.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';

const relay = (overrides: Record<string, unknown> = {}) => parseConfig({
  algorithm: 'marft-action', seed: 1, task: { name: 'relay-game', options: { agents: 3 } }, model: { engine: 'tabular' },
  policy: { parameterSharing: false }, actor: { klCoef: 0, optim: { lr: 0.1 } }, critic: { optim: { lr: 0.1 } },
  rollout: { batchSize: 32, maxNewTokens: 1 }, train: { steps: 3, checkpointEvery: 100000 }, ...overrides,
});

test('baseline exact is refused where it cannot hold: a task without exact values, no critic, a truncated sampler', () => {
  const exact = { advantage: { baseline: 'exact' } };
  assert.throws(() => planFor(relay({ ...exact, task: { name: 'coordination-game' } }), coordinationGame({}).task), /advantage\.baseline: exact needs a task that can value its states exactly .* task 'coordination-game' cannot/);
  assert.throws(() => planFor(relay({ ...exact, algorithm: 'grpo', rollout: { batchSize: 8, rolloutsPerPrompt: 4, maxNewTokens: 1 } }), relayGame({ agents: 3 }).task), /advantage\.baseline: exact replaces the critic's values at the action level; grpo has no critic/);
  assert.throws(() => planFor(relay({ ...exact, rollout: { batchSize: 8, maxNewTokens: 1, topK: 2 } }), relayGame({ agents: 3 }).task), /needs rollout\.temperature > 0, rollout\.topP 1 and rollout\.topK 0 \(got 1, 1, 2\)/);
  assert.doesNotThrow(() => planFor(relay(exact), relayGame({ agents: 3 }).task));
});

async function run(overrides: Record<string, unknown>) {
  const config = relay(overrides);
  const { task, vocabSize } = relayGame({ agents: 3 });
  const dir = mkdtempSync(join(tmpdir(), 'marft-exact-'));
  try {
    return (await train({ config, engine: new TabularEngine(vocabSize), task, runDir: dir, progress: false, evaluateBeforeAfter: false })).metrics;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('relay-game logs the learned critic against the exact values; baseline exact credits with them', async () => {
  const learned = await run({});
  const exact = await run({ advantage: { baseline: 'exact' } });
  for (const m of [...learned, ...exact]) {
    for (const key of ['explained_variance_exact', 'explained_variance_exact/pos0', 'explained_variance_exact/pos1', 'explained_variance_exact/pos2']) {
      assert.ok(typeof m[key] === 'number' || m[key] === null, `${key}: ${m[key]}`);
    }
  }
  // Step 0 samples the same episodes (the same untrained policies); the credit differs from there.
  assert.equal(learned[0]!.score_mean, exact[0]!.score_mean);
  assert.equal(learned[0]!.explained_variance_exact, exact[0]!.explained_variance_exact);
  assert.notEqual(learned[0]!.advantage_std, exact[0]!.advantage_std);
  // With the exact values credited, the values' mean is the exact one: the chance of success of an
  // untrained relay (each agent uniform over the 1 + 3 + 4 tokens) times the reward scale.
  assert.ok(Math.abs(Number(exact[0]!.value_mean) / Number(exact[0]!.reward_scale) - 1 / 8) < 1e-6, `${exact[0]!.value_mean}`);
});

test('whitenBy position: each agent position zero-mean, unit-std on its own', () => {
  const action = (agentIndex: number, advantage: number) => ({ agentIndex, advantages_K: Float64Array.of(advantage) }) as unknown as TrainAction;
  const actions = [action(0, 1), action(0, 3), action(1, 100), action(1, 300), action(1, 200)];
  normaliseAdvantages(actions, 'position');
  const of = (pos: number) => actions.filter((a) => a.agentIndex === pos).map((a) => a.advantages_K[0]!);
  for (const pos of [0, 1]) {
    const xs = of(pos);
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(Math.abs(m) < 1e-9);
    assert.ok(Math.abs(Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length) - 1) < 1e-6, `pos${pos}: ${xs}`);
  }
  // Whitened together, position 0's advantages would be nearly equal (both far below the mean).
  const together = [action(0, 1), action(0, 3), action(1, 100), action(1, 300), action(1, 200)];
  normaliseAdvantages(together);
  assert.ok(Math.abs(together[0]!.advantages_K[0]! - together[1]!.advantages_K[0]!) < 0.02);
});
