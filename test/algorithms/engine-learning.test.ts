// Learning tests on the real embedded engine: a tiny random Qwen3-shaped decoder built in the test
// (hidden 256, 2 layers), LoRA policy adapters and a frozen-base + MLP critic, fixed seeds.
// Coordination game (src/tasks/toy/coordination-game.ts): the receiver must answer the sender's
// secret, which it only sees through the sender's message; the sender gets a role-local reward 0.5
// for stating it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import type { Engine } from '../../src/engine/types.ts';
import { isTimingKey } from '../../src/runs/metrics-log.ts';
import { basePolicies, evaluatePolicies } from '../../src/train/evaluate.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { bandit } from '../../src/tasks/toy/bandit.ts';
import { toyDecoder } from '../../src/tasks/toy/toy-decoder.ts';
import { train } from '../../src/run/train.ts';
import type { TaskBundle } from '../../src/train/task.ts';

const long = process.env.MARFT_LONG_TESTS !== '0';
const skip = !long && 'MARFT_LONG_TESTS=0';

function tinyModel(vocabSize: number): Engine {
  return toyDecoder(vocabSize, 256, 5);
}

function configFor(overrides: { algorithm?: string; sharing?: boolean; epochs?: number; lr?: number; steps: number; checkpointEvery?: number }) {
  return parseConfig({
    algorithm: overrides.algorithm ?? 'marft-action',
    seed: 1,
    policy: { parameterSharing: overrides.sharing ?? true, loraRank: 8, loraAlpha: 16 },
    actor: { klCoef: 0, epochs: overrides.epochs ?? 1, optim: { lr: overrides.lr ?? 0.01 } },
    critic: { kind: 'mlp', mlpHidden: [32], optim: { lr: overrides.lr ?? 0.01 } },
    rollout: { batchSize: 64, maxNewTokens: 1 },
    train: { steps: overrides.steps, checkpointEvery: overrides.checkpointEvery ?? 1000 },
    eval: { seeds: 2 },
  });
}

async function learn(bundle: TaskBundle, config: ReturnType<typeof configFor>) {
  const engine = tinyModel(bundle.vocabSize);
  const result = await train({ config, engine, task: bundle.task, runDir: mkdtempSync(join(tmpdir(), 'marft-engine-')), progress: false });
  const before = await evaluatePolicies(engine, bundle.task, config, basePolicies(bundle.task));
  const after = await evaluatePolicies(engine, bundle.task, config, result.plan.policies);
  await engine.dispose();
  return { before: before.score, after: after.score, metrics: result.metrics };
}

test('embedded engine: MARFT with D = 1 reaches >= 0.9 held-out in 40 steps; with D = 0 it stays <= 0.35', { skip }, async (t) => {
  const dependent = await learn(coordinationGame({ symbols: 4, dependency: true, senderHint: 0.5 }), configFor({ steps: 40, lr: 0.003 }));
  assert.ok(dependent.before <= 0.3, `untrained ${dependent.before}`);
  assert.ok(dependent.after >= 0.9, `MARFT, D = 1: ${dependent.after}`);
  const independent = await learn(coordinationGame({ symbols: 4, dependency: false, senderHint: 0.5 }), configFor({ steps: 40, lr: 0.003 }));
  t.diagnostic(`held-out: untrained ${dependent.before}, MARFT D = 1 ${dependent.after}, D = 0 ${independent.after}`);
  assert.ok(independent.after <= 0.35, `D = 0: ${independent.after}`);
});

test('embedded engine: MARFT without parameter sharing (3 adapters) reaches >= 0.9 in 35 steps (4 PPO epochs)', { skip }, async (t) => {
  const r = await learn(coordinationGame({ symbols: 4, dependency: true, senderHint: 0.5 }), configFor({ sharing: false, epochs: 4, lr: 0.002, steps: 35 }));
  t.diagnostic(`held-out: untrained ${r.before}, unshared MARFT ${r.after}`);
  assert.ok(r.after >= 0.9, `unshared MARFT: ${r.after}`);
  assert.ok(r.metrics.some((m) => Number(m.clip_fraction) > 0), 'several epochs make the clip active');
});

test('embedded engine: one-step bandit picks the best arm >= 90% of the time after 20 steps', { skip }, async (t) => {
  const r = await learn(bandit({ armRewards: [0, 0.2, 1, 0.5] }), configFor({ steps: 20 }));
  t.diagnostic(`bandit: untrained ${r.before}, trained ${r.after}`);
  assert.ok(r.after >= 0.9, `bandit: ${r.after}`);
});

test('embedded engine: resuming from a checkpoint continues with the same metrics (PEFT adapters, critic, optimiser state)', { skip }, async () => {
  const bundle = coordinationGame({ symbols: 4, dependency: true, senderHint: 0.5 });
  const config = configFor({ steps: 6, checkpointEvery: 3, epochs: 2 });
  const strip = (ms: Record<string, unknown>[]) => ms.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !isTimingKey(k))));
  const whole = await train({ config, engine: tinyModel(bundle.vocabSize), task: bundle.task, runDir: mkdtempSync(join(tmpdir(), 'marft-whole-')), progress: false });
  const dir = mkdtempSync(join(tmpdir(), 'marft-split-'));
  await train({ config, engine: tinyModel(bundle.vocabSize), task: bundle.task, runDir: dir, progress: false, stopAtStep: 3 });
  // A fresh process would build a fresh engine: the same base, then the checkpoint's state.
  const resumed = await train({ config, engine: tinyModel(bundle.vocabSize), task: bundle.task, runDir: dir, progress: false });
  assert.equal(resumed.resumedFrom, 3);
  assert.deepEqual(strip(resumed.metrics), strip(whole.metrics));
});
