// examples/custom-workflow.ts runs as documented: the router changes D at step 1, the Judge is right then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runExample } from '../../examples/custom-workflow.ts';

test('examples/custom-workflow.ts: diamond at step 0, chain at step 1, solved at step 1', async () => {
  const episodes = await runExample();
  assert.deepEqual(episodes.map((e) => [e.problemId, e.outcome, e.steps.map((s) => [s.teamReward, s.done])]), [
    ['add-5-3', 1, [[0, false], [1, true]]],
    ['add-5-3-again', 1, [[0, false], [1, true]]],
  ]);
  const ep = episodes[0]!;
  assert.deepEqual(ep.actions.map((a) => `${a.step}:${a.agent}`), [
    '0:analyst', '0:solver_a', '0:solver_b', '0:judge',
    '1:analyst', '1:solver_a', '1:solver_b', '1:judge',
  ]);
  // Rewards recorded raw: each turn's team reward (the trainer places it), no role-local reward.
  assert.deepEqual(ep.steps.map((s) => s.teamReward), [0, 1]);
  assert.deepEqual(ep.actions.map((a) => a.localReward), [0, 0, 0, 0, 0, 0, 0, 0]);
  const info = ep.info as { correct: boolean; workflow: { graphs: unknown[] } };
  assert.equal(info.correct, true);
  assert.equal(info.workflow.graphs.length, 2);
});
