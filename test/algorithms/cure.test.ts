// CURE (algorithm cure): the unit-test reward by hand, the cross execution of a group's programs and
// tests, CURE's rewards on the workflow task with a scripted policy through the sandbox, and a tiny
// two-step run of examples/cure-mbpp-tiny.yaml (machinery only: a random tiny model learns nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cureGroupRewards, cureTestReward } from '../../src/env/cure-rewards.ts';
import type { ProgramRunner } from '../../src/env/program-runner.ts';
import type { CodeProblem } from '../../src/env/datasets/index.ts';
import { groupRelativeAdvantages } from '../../src/core/statistics.ts';
import { createWorkflowTask, taskCharTokenizer, type WorkflowTask } from '../../src/tasks/index.ts';
import { ScriptedSampler } from '../../src/workflow/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { buildRun } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const long = process.env.MARFT_LONG_TESTS === '0';
const T = true;
const F = false;

test('CURE’s unit-test reward: the fraction of wrong programs rejected when every correct one passes, else −1', () => {
  // Programs 0, 1 correct; 2, 3, 4 wrong. The test passes 0, 1 and 3: it rejects 2 of the 3 wrong ones.
  assert.equal(cureTestReward([T, T, F, F, F], [T, T, F, T, F]), 2 / 3);
  // A correct program fails it: −1 however many wrong ones it rejects.
  assert.equal(cureTestReward([T, T, F, F, F], [T, F, F, F, F]), -1);
  // No wrong program: nothing to reject, 0 when the correct ones pass.
  assert.equal(cureTestReward([T, T], [T, T]), 0);
  // No correct program: the condition holds vacuously; it rejects 1 of 2.
  assert.equal(cureTestReward([F, F], [F, T]), 0.5);
  // A malformed test (no Test Input / Test Output blocks): −1.
  assert.equal(cureTestReward([T, F], [F, F], false), -1);
});

test('the cross execution: every program on every test, rewards per CURE, standardised per group', async () => {
  // Program P prints its letter for any input; the tests declare outputs a, b and (malformed) none.
  const run: ProgramRunner = async ({ source }) => ({ status: 'ok', stdout: `${/print\('(.)'\)/.exec(source)![1]}\n`, stderr: '', exitCode: 0 }) as unknown as Awaited<ReturnType<ProgramRunner>>;
  const prog = (c: string) => `\`\`\`python\nprint('${c}')\n\`\`\``;
  const test = (out: string) => `Test Input:\n\`\`\`\n1\n\`\`\`\nTest Output:\n\`\`\`\n${out}\n\`\`\``;
  const r = await cureGroupRewards({ programs: [prog('a'), prog('b'), prog('a')], goldenPassRates: [1, 0.5, 1], tests: [test('a'), test('b'), 'no test'] }, run, 1000);
  assert.deepEqual(r.passes, [[T, F, F], [F, T, F], [T, F, F]]);
  assert.deepEqual(r.programs, [1, 0.5, 1]);
  // Test a: both correct programs pass, the wrong one fails: +1. Test b: a correct one fails: −1. Malformed: −1.
  assert.deepEqual(r.tests, [1, -1, -1]);
  // Standardised within each group: tests [1, −1, −1] → mean −1/3, std √(8/9).
  const adv = groupRelativeAdvantages(r.tests, ['t', 't', 't'], { scaleByStd: true });
  const s = Math.sqrt(8 / 9) + 1e-6;
  [(4 / 3) / s, (-2 / 3) / s, (-2 / 3) / s].forEach((x, i) => assert.ok(Math.abs(adv[i]! - x) < 1e-9));
});

test('the workflow task gives CURE’s rewards: MBPP programs judged by the sandbox, tests run against them', { skip: long, timeout: 120_000 }, async () => {
  const tok = taskCharTokenizer();
  let task!: WorkflowTask;
  const sampler = new ScriptedSampler(tok, (input) => {
    const p = task.problems.train.find((x) => x.id === input.meta!.problemId) as CodeProblem;
    const e = input.meta!.episode;
    // Episode 0's Coder writes the reference, episode 1's a wrong program; both print nothing.
    if (input.meta!.agent.startsWith('coder')) return `\`\`\`python\n${e === 0 ? p.referenceSolution : 'def unrelated():\n    return None'}\n\`\`\``;
    // Episode 0's Tester declares an empty output (every program passes it: it rejects no wrong
    // program, reward 0); episode 1's declares "x" (the correct program fails it: −1).
    return `Test Input:\n\`\`\`\n\n\`\`\`\nTest Output:\n\`\`\`\n${e === 0 ? '' : 'x'}\n\`\`\``;
  });
  task = createWorkflowTask({ dataset: 'mbpp', workflow: 'coder-tester', horizon: 1, programTimeoutMs: 10_000 }, { tokenizer: tok, sampler: () => sampler });
  assert.deepEqual(task.rewardSchemes, ['cure']);
  const engine = { info: { vocabSize: tok.vocabSize } } as unknown as Engine;
  const episodes = await task.rollout(engine, { step: 0, seed: 5, batchSize: 1, rolloutsPerPrompt: 2, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4000 }, policies: { coder: 'policy', tester: 'policy' }, rewardScheme: 'cure' });
  // CURE's rewards replace each action's own (role-local) reward; the cure plan places them alone.
  const rewards = episodes.map((ep) => Object.fromEntries(ep.actions.map((a) => [a.agent, a.localReward])));
  assert.deepEqual(rewards, [{ coder: 1, tester: 0 }, { coder: 0, tester: -1 }]);
  assert.deepEqual(episodes[0]!.info.cure, { passes: [[T, F], [T, F]], programRewards: [1, 0], testRewards: [0, -1] });
});

test('examples/cure-mbpp-tiny.yaml: two CURE steps on the tiny random model, finite rewards for both roles', { skip: long, timeout: 300_000 }, async () => {
  const config = await loadConfig(join(repo, 'examples/cure-mbpp-tiny.yaml'));
  const runDir = mkdtempSync(join(tmpdir(), 'marft-cure-'));
  const { bundle, engine } = await buildRun(config, runDir);
  const result = await train({ config, engine, task: bundle.task, runDir, progress: false });
  assert.deepEqual(result.plan.policies, { coder: 'policy', tester: 'policy' }, 'one shared policy for both roles');
  assert.equal(result.metrics.length, 2);
  for (const m of result.metrics) {
    // A random tiny model writes neither a program nor a test case: programs 0, tests −1 (malformed).
    assert.equal(m['reward/coder'], 0);
    assert.equal(m['reward/tester'], -1);
    for (const k of ['policy_loss', 'kl', 'grad_norm_actor']) assert.ok(Number.isFinite(m[k] as number), `${k}: ${m[k]}`);
    assert.ok((m.tokens_generated as number) > 0);
  }
});
