// CURE (algorithm cure): the unit-test reward by hand against the authors' formula (Gen-Verse/CURE,
// optimization/reward.py), the cross execution of a group's programs and tests, the flat groups
// dropped, the horizon refused before any rollout, CURE's rewards on the workflow task with a
// scripted policy through the sandbox, and a tiny two-step run of examples/cure-mbpp-tiny.yaml
// (machinery only: a random tiny model learns nothing).
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
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { planFor } from '../../src/algorithms/check.ts';
import { parseConfig } from '../../src/config/load.ts';
import { assignCredit, flattenEpisodes } from '../../src/train/batch.ts';
import { flatGroups } from '../../src/train/credit/flat-groups.ts';
import { groupKeyOf } from '../../src/train/credit/group-relative.ts';
import type { ActionRecord, Episode } from '../../src/workflow/trajectory.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const long = process.env.MARFT_LONG_TESTS === '0';
const T = true;
const F = false;

test('CURE’s unit-test reward as the authors compute it: sign from the correct programs, scale from the wrong ones', () => {
  // Gen-Verse/CURE optimization/reward.py: with C the correct programs and W the wrong ones, a test
  // that every program of C passes gets +1 × (fraction of W it rejects); one that a program of C
  // fails gets −1 × (fraction of W it accepts); with W empty the scale is 1.
  // Programs 0, 1 correct; 2, 3, 4 wrong. The test passes 0, 1 and 3: good, rejects 2 of 3 → +2/3.
  assert.equal(cureTestReward([T, T, F, F, F], [T, T, F, T, F]), 2 / 3);
  // Correct program 1 fails it (bad), and it accepts wrong programs 2 and 3 of 3: −2/3 (the earlier −1).
  assert.equal(cureTestReward([T, T, F, F, F], [T, F, T, T, F]), -2 / 3);
  // A bad test that rejects every wrong program as well: −1 × 0 = 0.
  assert.equal(cureTestReward([T, T, F, F, F], [T, F, F, F, F]), 0);
  // No wrong program: the sign alone, +1 for a good test (the earlier 0), −1 for a bad one.
  assert.equal(cureTestReward([T, T], [T, T]), 1);
  assert.equal(cureTestReward([T, T], [T, F]), -1);
  // No correct program: not scored (the authors skip the problem's tests; the earlier code gave the
  // test that rejects everything +1 here).
  assert.equal(cureTestReward([F, F], [F, F]), null);
  assert.equal(cureTestReward([F, F], [F, T]), null);
  // A malformed test (no Test Input / Test Output blocks): −1, when the tests are scored at all.
  assert.equal(cureTestReward([T, F], [F, F], false), -1);
  assert.equal(cureTestReward([F, F], [F, F], false), null);
});

test('the cross execution: every program on every test, rewards per CURE, standardised per group', async () => {
  // Program P prints its letter for any input; the tests declare outputs a, b, c and (malformed) none.
  const run: ProgramRunner = async ({ source }) => ({ status: 'ok', stdout: `${/print\('(.)'\)/.exec(source)![1]}\n`, stderr: '', exitCode: 0 }) as unknown as Awaited<ReturnType<ProgramRunner>>;
  const prog = (c: string) => `\`\`\`python\nprint('${c}')\n\`\`\``;
  const test = (out: string) => `Test Input:\n\`\`\`\n1\n\`\`\`\nTest Output:\n\`\`\`\n${out}\n\`\`\``;
  // Programs a (correct), b (wrong, pass rate 0.5), a (correct), c (wrong, pass rate 0).
  const r = await cureGroupRewards({ programs: [prog('a'), prog('b'), prog('a'), prog('c')], goldenPassRates: [1, 0.5, 1, 0], tests: [test('a'), test('b'), test('c'), 'no test'] }, run, 1000);
  assert.deepEqual(r.passes, [[T, F, F, F], [F, T, F, F], [T, F, F, F], [F, F, T, F]]);
  assert.deepEqual(r.programs, [1, 0.5, 1, 0]);
  // Test a: both correct programs pass it, it rejects both wrong ones: +2/2 = +1. Test b: a correct
  // one fails it, it accepts 1 of the 2 wrong ones: −1/2. Test c: likewise −1/2. Malformed: −1.
  assert.equal(r.testsScored, true);
  assert.deepEqual(r.tests, [1, -0.5, -0.5, -1]);
  // Standardised within each group (population deviation): tests [1, −½, −½, −1] → mean −1/4,
  // variance (25/16 + 1/16 + 1/16 + 9/16)/4 = 9/16, std 3/4: advantages 5/3, −1/3, −1/3, −1.
  const adv = groupRelativeAdvantages(r.tests, ['t', 't', 't', 't'], { scaleByStd: true });
  const s = 0.75 + 1e-6;
  [1.25 / s, -0.25 / s, -0.25 / s, -0.75 / s].forEach((x, i) => assert.ok(Math.abs(adv[i]! - x) < 1e-12, `${adv[i]} vs ${x}`));
  // No program correct: the tests are not scored, every test 0 (a flat group: dropped, below).
  const none = await cureGroupRewards({ programs: [prog('b'), prog('c')], goldenPassRates: [0.5, 0], tests: [test('b'), test('z')] }, run, 1000);
  assert.deepEqual([none.testsScored, none.tests, none.programs], [false, [0, 0], [0.5, 0]]);
});

test('CURE drops the groups with no spread: the program group and the tester group of a problem no program solves', () => {
  const config = parseConfig({ algorithm: 'cure', rollout: { rolloutsPerPrompt: 2 } });
  const plan = ALGORITHM_REGISTRY.cure.plan(['coder', 'tester'], config);
  assert.deepEqual([plan.dropFlatGroups, plan.groupKey, plan.groupDeviation, plan.kl], [true, 'role-turn', 'population', true]);
  // Two problems, two episodes each: problem p has programs (1, 0.5) and tests (−1, +1); problem q
  // has programs (0, 0) and no correct program, so its tests are (0, 0) unscored.
  const act = (agent: string, agentIndex: number, reward: number): ActionRecord => ({ agent, agentIndex, step: 0, policy: 'policy', promptTokens: [1], actionTokens: [2, 3], behaviourLogprobs: [-1, -1], stopReason: 'stop_token', text: agent, localReward: reward });
  const ep = (group: string, program: number, test: number): Episode => ({ problemId: group, group, actions: [act('coder', 0, program), act('tester', 1, test)], steps: [{ t: 0, teamReward: 0, done: true }], outcome: 0, info: {} });
  const episodes = [ep('p', 1, -1), ep('p', 0.5, 1), ep('q', 0, 0), ep('q', 0, 0)];
  const actions = flattenEpisodes(episodes, plan, config);
  assignCredit(actions, episodes, plan, config);
  // p's programs: mean 0.75, population std 0.25 → ±1 (up to eps); p's tests ∓1; q's: 0.
  assert.deepEqual(actions.map((a) => Math.round(a.advantages_K[0]! * 1e5) / 1e5), [1, -1, -1, 1, 0, 0, 0, 0]);
  const flat = flatGroups(actions, groupKeyOf(plan));
  assert.deepEqual([flat.flat, flat.groups], [2, 4]);
  assert.deepEqual(actions.filter((a) => !flat.actions.has(a)).map((a) => a.episode), [0, 0, 1, 1], "only p's actions are updated");
});

test('CURE with a horizon other than 1 is refused by planFor in one line, before any rollout', () => {
  const config = parseConfig({ algorithm: 'cure', rollout: { rolloutsPerPrompt: 2 } });
  for (const horizon of [2, 4]) {
    const task = createWorkflowTask({ dataset: 'mbpp', workflow: 'coder-tester', horizon });
    assert.throws(() => planFor(config, task), (e: Error) => e.name === 'ConfigError' && e.message === `task.options.horizon: algorithm cure has the Coder and the Tester act once, from the problem alone; set task.options.horizon: 1 (got ${horizon})`);
  }
  assert.equal(planFor(config, createWorkflowTask({ dataset: 'mbpp', workflow: 'coder-tester', horizon: 1 })).rewards, 'cure');
});

test('the workflow task gives CURE’s rewards: MBPP programs judged by the sandbox, tests run against them', { skip: long, timeout: 120_000 }, async () => {
  const tok = taskCharTokenizer();
  let task!: WorkflowTask;
  const sampler = new ScriptedSampler(tok, (input) => {
    const p = task.problems.train.find((x) => x.id === input.meta!.problemId) as CodeProblem;
    const e = input.meta!.episode;
    // Episode 0's Coder writes the reference (prints nothing on an empty input), episode 1's a wrong
    // program that prints nothing either, episode 2's a wrong program that prints "x".
    if (input.meta!.agent.startsWith('coder')) return `\`\`\`python\n${e === 0 ? p.referenceSolution : e === 1 ? 'def unrelated():\n    return None' : "print('x')"}\n\`\`\``;
    // The Testers declare an empty output (e0), "x" (e1) and "y" (e2) for an empty input.
    return `Test Input:\n\`\`\`\n\n\`\`\`\nTest Output:\n\`\`\`\n${['', 'x', 'y'][e]}\n\`\`\``;
  });
  task = createWorkflowTask({ dataset: 'mbpp', workflow: 'coder-tester', horizon: 1, programTimeoutMs: 10_000 }, { tokenizer: tok, sampler: () => sampler });
  assert.deepEqual(task.rewardSchemes, ['cure']);
  const engine = { info: { vocabSize: tok.vocabSize } } as unknown as Engine;
  const episodes = await task.rollout(engine, { step: 0, seed: 5, batchSize: 1, rolloutsPerPrompt: 3, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4000 }, policies: { coder: 'policy', tester: 'policy' }, rewardScheme: 'cure' });
  // Program 0 is correct, 1 and 2 wrong. Test "" passes programs 0 and 1: good, rejects 1 of the 2
  // wrong ones: +1/2. Test "x" fails the correct program (bad) and accepts program 2: −1/2. Test "y"
  // is bad and accepts no wrong program: −1 × 0 = 0.
  // CURE's rewards replace each action's own (role-local) reward; the cure plan places them alone.
  const rewards = episodes.map((ep) => Object.fromEntries(ep.actions.map((a) => [a.agent, a.localReward])));
  assert.deepEqual(rewards, [{ coder: 1, tester: 0.5 }, { coder: 0, tester: -0.5 }, { coder: 0, tester: 0 }]);
  assert.deepEqual(episodes[0]!.info.cure, { passes: [[T, F, F], [T, F, F], [F, T, F]], programRewards: [1, 0, 0], testRewards: [0.5, -0.5, 0], testsScored: true });
});

test('examples/cure-mbpp-tiny.yaml: two CURE steps on the tiny random model, finite rewards for both roles', { skip: long, timeout: 300_000 }, async () => {
  const config = await loadConfig(join(repo, 'examples/cure-mbpp-tiny.yaml'));
  const runDir = mkdtempSync(join(tmpdir(), 'marft-cure-'));
  const { bundle, engine } = await buildRun(config, runDir);
  const result = await train({ config, engine, task: bundle.task, runDir, progress: false });
  assert.deepEqual(result.plan.policies, { coder: 'policy', tester: 'policy' }, 'one shared policy for both roles');
  assert.equal(result.metrics.length, 2);
  for (const m of result.metrics) {
    // A random tiny model writes neither a program nor a test case: programs 0, and with no correct
    // program the tests are not scored (0). Every group is flat, so nothing is updated (the authors
    // would have dropped every one of these problems too).
    assert.equal(m['reward/coder'], 0);
    assert.equal(m['reward/tester'], 0);
    assert.equal(m.flat_group_fraction, 1);
    for (const k of ['policy_loss', 'kl', 'grad_norm_actor']) assert.ok(Number.isFinite(m[k] as number), `${k}: ${m[k]}`);
    assert.ok((m.tokens_generated as number) > 0);
  }
});
