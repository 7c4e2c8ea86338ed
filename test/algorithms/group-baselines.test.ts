// GRPO and MAGRPO train on the toy tasks with the lookup-table engine (fast, exact, fixed seeds):
// G = 4 episodes per problem, no critic. Rewards must rise over the run and the trained policies
// must beat the untrained ones on evaluation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { ALGORITHMS } from '../../src/config/choices.ts';
import { parseConfig } from '../../src/config/load.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { basePolicies, evaluatePolicies } from '../../src/train/evaluate.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { bandit } from '../../src/tasks/toy/bandit.ts';
import { train } from '../../src/run/train.ts';
import { checkPlan, planFor } from '../../src/algorithms/check.ts';

async function run(algorithm: 'grpo' | 'magrpo', which: 'bandit' | 'coordination', steps: number) {
  const config = parseConfig({
    seed: 1, algorithm, model: { engine: 'tabular' },
    actor: { klCoef: 0, optim: { lr: 0.1 } },
    rollout: { batchSize: 16, rolloutsPerPrompt: 4, maxNewTokens: which === 'bandit' ? 1 : 4 },
    train: { steps, checkpointEvery: 1000 }, eval: { seeds: 2 },
  });
  const { task, vocabSize } = which === 'bandit' ? bandit({}) : coordinationGame({ symbols: 4 });
  const engine = new TabularEngine(vocabSize);
  const runDir = mkdtempSync(join(tmpdir(), `marft-${algorithm}-`));
  const result = await train({ config, engine, task, runDir, progress: false });
  const before = await evaluatePolicies(engine, task, config, basePolicies(task));
  const after = await evaluatePolicies(engine, task, config, result.plan.policies);
  const scores = result.metrics.map((m) => Number(m.score_mean));
  const third = Math.floor(steps / 3);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return { before: before.score, after: after.score, first: mean(scores.slice(0, third)), last: mean(scores.slice(-third)), metrics: result.metrics, runDir };
}

for (const algorithm of ['grpo', 'magrpo'] as const) {
  test(`${algorithm} learns the bandit in 30 steps and the coordination game in 100, with no critic`, async () => {
    const b = await run(algorithm, 'bandit', 30);
    assert.ok(b.last > b.first + 0.2, `bandit training reward ${b.first} → ${b.last}`);
    assert.ok(b.before < 0.5 && b.after >= 0.85, `bandit evaluation ${b.before} → ${b.after}`);
    const c = await run(algorithm, 'coordination', 100);
    assert.ok(c.last > c.first + 0.3, `coordination training reward ${c.first} → ${c.last}`);
    assert.ok(c.before < 0.25 && c.after >= 0.9, `coordination evaluation ${c.before} → ${c.after}`);
    // No critic: nothing valued, nothing trained, nothing saved.
    for (const m of c.metrics) {
      assert.equal(m.value_loss, null);
      assert.equal(m.explained_variance, null);
      assert.equal(m.kl, 0, 'klCoef 0: no KL term');
    }
    const checkpoints = join(c.runDir, 'checkpoints');
    for (const cp of readdirSync(checkpoints)) assert.ok(!existsSync(join(checkpoints, cp, 'critics')) || readdirSync(join(checkpoints, cp, 'critics')).length === 0, `${cp} holds a critic`);
  });
}

test('the configuration offers exactly the registered algorithms, and every plan fits its estimator', () => {
  assert.deepEqual([...ALGORITHMS].sort(), Object.keys(ALGORITHM_REGISTRY).sort());
  for (const name of ALGORITHMS) {
    const config = parseConfig({ algorithm: name, rollout: { rolloutsPerPrompt: 4 } });
    checkPlan(ALGORITHM_REGISTRY[name].plan(['a', 'b'], config), name);
  }
  const grpo = ALGORITHM_REGISTRY.grpo.plan(['a'], parseConfig({}));
  assert.throws(() => checkPlan({ ...grpo, critics: { a: 'critic' } }, 'grpo'), /reads no critic, but the plan creates one/);
  assert.throws(() => checkPlan({ ...grpo, sampling: 'independent' }, 'grpo'), /compares episode groups/);
  assert.throws(() => checkPlan({ ...grpo, advantage: 'gae-action' }, 'grpo'), /needs critic, but the plan has none/);
  // The loop finds flat groups by (problem, agent, turn): a plan grouping by role alone cannot drop them.
  assert.equal(grpo.groupKey, 'role');
  // The loop's flat-group filter groups by the plan's own key (groupKeyOf), so any key may drop flat groups.
  assert.doesNotThrow(() => checkPlan({ ...grpo, dropFlatGroups: true }, 'grpo'));
});

test('a group algorithm with one episode per problem is refused in one line naming the key', () => {
  const { task } = bandit({});
  for (const algorithm of ['grpo', 'magrpo']) {
    assert.throws(() => planFor(parseConfig({ algorithm }), task), (e: Error) => e.name === 'ConfigError' && /^rollout\.rolloutsPerPrompt: .*at least 2/.test(e.message) && !e.message.includes('\n'));
  }
  // MAGRPO's policies are independent whatever parameterSharing says; GRPO follows it.
  const { task: duo } = coordinationGame({});
  const config = { rollout: { rolloutsPerPrompt: 4 }, policy: { parameterSharing: true } };
  assert.deepEqual(planFor(parseConfig({ ...config, algorithm: 'magrpo' }), duo).policies, { sender: 'policy-sender', receiver: 'policy-receiver' });
  assert.deepEqual(planFor(parseConfig({ ...config, algorithm: 'grpo' }), duo).policies, { sender: 'policy', receiver: 'policy' });
});

test('cross joint actions: refused in one line for a task without jointRewards or an algorithm other than magrpo; the coordination game offers them without the dependency', async () => {
  const cross = { rollout: { rolloutsPerPrompt: 2 }, advantage: { jointActions: 'cross' } };
  const oneLine = (pattern: RegExp) => (e: Error) => e.name === 'ConfigError' && pattern.test(e.message) && !e.message.includes('\n');
  const { task: dependent } = coordinationGame({});
  assert.equal(dependent.jointRewards, undefined, 'the receiver sees the message: no arbitrary combination');
  assert.throws(() => planFor(parseConfig({ ...cross, algorithm: 'magrpo' }), dependent), oneLine(/^advantage\.jointActions: cross needs a task that scores/));
  const { task: independent } = coordinationGame({ dependency: false, senderHint: 0.5 });
  assert.throws(() => planFor(parseConfig({ ...cross, algorithm: 'grpo' }), independent), oneLine(/^advantage\.jointActions: cross applies to magrpo only/));
  assert.ok(planFor(parseConfig({ ...cross, algorithm: 'magrpo' }), independent));
  // Secret 2 (symbol token 5): answer 5 scores the team reward 1, message 5 the sender's hint 0.5 (raw; the trainer weighs them).
  const episode = { problemId: 'secret-2', actions: [], steps: [], outcome: 0, info: { secret: 2 } };
  const joint = (message: number, answer: number) => independent.jointRewards!(episode, [{ agent: 'sender', tokens: [message], text: '' }, { agent: 'receiver', tokens: [answer], text: '' }]);
  assert.deepEqual([joint(5, 5), joint(5, 4), joint(3, 5), joint(3, 4)], [
    { teamReward: 1, localRewards: [0.5, 0] }, { teamReward: 0, localRewards: [0.5, 0] }, { teamReward: 1, localRewards: [0, 0] }, { teamReward: 0, localRewards: [0, 0] },
  ]);
  // A short magrpo run with cross joint actions trains (every step scored, finite advantages).
  const config = parseConfig({ seed: 1, algorithm: 'magrpo', model: { engine: 'tabular' }, actor: { klCoef: 0, optim: { lr: 0.1 } }, rollout: { batchSize: 4, rolloutsPerPrompt: 2, maxNewTokens: 1 }, train: { steps: 2, checkpointEvery: 1000 }, eval: { seeds: 1 }, advantage: { jointActions: 'cross' } });
  const { task, vocabSize } = coordinationGame({ dependency: false });
  const result = await train({ config, engine: new TabularEngine(vocabSize), task, runDir: mkdtempSync(join(tmpdir(), 'marft-magrpo-cross-')), progress: false });
  assert.equal(result.metrics.length, 2);
  for (const m of result.metrics) assert.ok(Number.isFinite(Number(m.advantage_mean)), 'finite advantages');
});
