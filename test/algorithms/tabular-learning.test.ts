// Learning tests of every algorithm on the lookup-table engine (fast, exact, fixed seeds): the
// coordination game needs agent 2 to condition on agent 1's action; the bandit is a one-step sanity check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { basePolicies, evaluatePolicies } from '../../src/train/evaluate.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { bandit } from '../../src/tasks/toy/bandit.ts';
import { train } from '../../src/run/train.ts';

async function run(overrides: Record<string, unknown>, taskOptions: Record<string, unknown>, steps: number, which: 'coordination' | 'bandit' = 'coordination') {
  const config = parseConfig({
    seed: 1,
    model: { engine: 'tabular' },
    actor: { klCoef: 0, optim: { lr: 0.1 } },
    critic: { optim: { lr: 0.1 } },
    rollout: { batchSize: 64, maxNewTokens: 4 },
    train: { steps, checkpointEvery: 1000 },
    eval: { seeds: 2 },
    ...overrides,
  });
  const { task, vocabSize } = which === 'coordination' ? coordinationGame(taskOptions) : bandit(taskOptions);
  const engine = new TabularEngine(vocabSize);
  const result = await train({ config, engine, task, runDir: mkdtempSync(join(tmpdir(), 'marft-learn-')), progress: false });
  const before = await evaluatePolicies(engine, task, config, basePolicies(task));
  const after = await evaluatePolicies(engine, task, config, result.plan.policies);
  return { before: before.score, after: after.score, metrics: result.metrics };
}

test('MARFT (action level) solves the coordination game with D = 1 in 100 steps; D = 0 stays near chance', async () => {
  const dependent = await run({ algorithm: 'marft-action' }, { symbols: 4, dependency: true }, 100);
  assert.ok(dependent.before < 0.25, `untrained ${dependent.before}`);
  assert.ok(dependent.after >= 0.9, `MARFT with D = 1 reached ${dependent.after}`);
  const independent = await run({ algorithm: 'marft-action' }, { symbols: 4, dependency: false }, 100);
  // Without the sender's message the receiver can do no better than 1/K = 0.25.
  assert.ok(independent.after <= 0.35, `D = 0 reached ${independent.after}`);
  assert.equal(dependent.metrics.length, 100);
  for (const key of ['reward/sender', 'reward/receiver', 'advantage_mean', 'return_std', 'kl', 'clip_fraction', 'value_loss', 'explained_variance', 'tokens_per_s', 'step_time_s']) {
    assert.ok(key in dependent.metrics[0]!, `metrics lack ${key}`);
  }
});

test('parameter sharing on and off both learn; IPPO, token-level and outcome MARFT learn', async () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['unshared MARFT', { algorithm: 'marft-action', policy: { parameterSharing: false } }, {}],
    ['IPPO', { algorithm: 'ippo' }, {}],
    ['token-level MARFT, 2-token messages', { algorithm: 'marft-token' }, { messageTokens: 2 }],
    ['outcome MARFT', { algorithm: 'marft-outcome' }, {}],
    ['agent-by-agent, interval 5', { algorithm: 'marft-action', policy: { parameterSharing: false }, actor: { klCoef: 0, optim: { lr: 0.1 }, agentByAgent: true, agentInterval: 5 } }, {}],
  ];
  for (const [name, overrides, options] of cases) {
    const r = await run(overrides, { symbols: 4, dependency: true, ...options }, name.startsWith('agent-by-agent') ? 160 : 100);
    assert.ok(r.after >= 0.85, `${name} reached ${r.after}`);
  }
});

test('agent-by-agent updates train one agent per interval, cycling; critic warm-up; periodic evaluation', async () => {
  const r = await run({ policy: { parameterSharing: false }, actor: { klCoef: 0, optim: { lr: 0.1 }, agentByAgent: true, agentInterval: 2 }, critic: { warmupSteps: 1, optim: { lr: 0.1 } }, train: { steps: 6, checkpointEvery: 1000, evalEvery: 3 } }, {}, 6);
  assert.deepEqual(r.metrics.map((m) => 'eval_score' in m), [false, false, true, false, false, true]);
  assert.deepEqual(r.metrics.map((m) => m.active_agent ?? null), [null, 'sender', 'sender', 'receiver', 'receiver', 'sender']);
  assert.equal(r.metrics[0]!.lr_actor, 0, 'critic warm-up: no actor step');
});

test('agent-by-agent updates with one shared policy adapter are refused with a one-line config error', async () => {
  await assert.rejects(run({ policy: { parameterSharing: true }, actor: { agentByAgent: true } }, {}, 1), (e: Error) => e.name === 'ConfigError' && /agentByAgent.*parameterSharing/.test(e.message) && !e.message.includes('\n'));
});

test('one-step bandit: the best arm is chosen >= 95% of the time after 40 steps', async () => {
  const r = await run({ rollout: { batchSize: 32, maxNewTokens: 1 } }, { armRewards: [0, 0.2, 1, 0.5] }, 40, 'bandit');
  // Evaluation reward = 1 only for the best arm; 0.5 and 0.2 for the others.
  assert.ok(r.before < 0.5, `untrained ${r.before}`);
  assert.ok(r.after >= 0.95, `bandit reached ${r.after}`);
});
