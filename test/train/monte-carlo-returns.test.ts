// The critic's ground truth: Monte Carlo returns along the credit chains, by hand, and the loop's
// explained variance measured against them rather than against the λ-returns (which hold the critic's
// own values at λ < 1; those stay in metrics.jsonl as explained_variance_targets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { parseConfig } from '../../src/config/load.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRun } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';
import { tabularConfig } from '../runs/reliability-fixtures.ts';
import { flattenEpisodes } from '../../src/train/batch.ts';
import { monteCarloReturns } from '../../src/train/credit/monte-carlo-returns.ts';
import type { ActionRecord, Episode } from '../../src/workflow/trajectory.ts';

/** Two agents, two steps; the team reward of step t arrives at its last action (MARFT's step-end placement). */
function duo(team: [number, number]): Episode {
  const act = (agent: string, agentIndex: number, step: number, tokens: number[]): ActionRecord =>
    ({ agent, agentIndex, step, policy: 'p', promptTokens: [1], actionTokens: tokens, behaviourLogprobs: tokens.map(() => -1), stopReason: 'stop_token', text: agent, localReward: 0 });
  return {
    problemId: 'q',
    actions: [act('a', 0, 0, [5, 6]), act('b', 1, 0, [7]), act('a', 0, 1, [5]), act('b', 1, 1, [8, 9])],
    steps: [{ t: 0, teamReward: team[0], done: false }, { t: 1, teamReward: team[1], done: true }],
    outcome: team[1], info: {},
  };
}

test('Monte Carlo returns: discounted rewards to the chain end (γ between steps, γ_agent between agents, γ_w inside an action)', () => {
  // Each turn's own team reward (reward.team: turn), so the two steps' rewards differ.
  const config = parseConfig({ reward: { team: 'turn' }, advantage: { gamma: 0.5, gammaAgent: 1, gammaToken: 1, lambda: 0.3 } });
  const episodes = [duo([1, 2])];
  const action = ALGORITHM_REGISTRY['marft-action'].plan(['a', 'b'], config);
  const actions = flattenEpisodes(episodes, action, config);
  assert.deepEqual(actions.map((a) => a.reward), [0, 1, 0, 2]);
  const g = monteCarloReturns(actions, episodes, action, config);
  // Step 1: b gets 2, a gets 0 + 1·2 = 2. Step 0: b gets 1 + 0.5·2 = 2, a gets 0 + 1·2 = 2.
  assert.deepEqual(actions.map((a) => Array.from(g.get(a)!)), [[2], [2], [2], [2]]);
  const withAgentDiscount = parseConfig({ reward: { team: 'turn' }, advantage: { gamma: 0.5, gammaAgent: 0.5, gammaToken: 1 } });
  const g2 = monteCarloReturns(actions, episodes, action, withAgentDiscount);
  // b1 = 2, a1 = 0.5·2 = 1; b0 = 1 + 0.5·a1 = 1.5, a0 = 0.5·1.5 = 0.75.
  assert.deepEqual(actions.map((a) => Array.from(g2.get(a)!)), [[0.75], [1.5], [1], [2]]);
  // Token level, γ_w = 0.5 inside an action: a0's two tokens are 0.5·2·... : token k's return is γ_w^(L−1−k)·(what follows its last token).
  const tokenConfig = parseConfig({ reward: { team: 'turn' }, advantage: { gamma: 0.5, gammaAgent: 1, gammaToken: 0.5 } });
  const token = ALGORITHM_REGISTRY['marft-token'].plan(['a', 'b'], tokenConfig);
  const tActions = flattenEpisodes(episodes, token, tokenConfig);
  const gt = monteCarloReturns(tActions, episodes, token, tokenConfig);
  // Step 1: b's tokens [0.5·2, 2] = [1, 2]; a's token: 1 (b's first token's return). Step 0: b's token 1 + 0.5·1 = 1.5; a's tokens [0.5·1.5, 1.5].
  assert.deepEqual(tActions.map((a) => Array.from(gt.get(a)!)), [[0.75, 1.5], [1.5], [1], [1, 2]]);
});

test('the loop measures the critic against Monte Carlo returns: the same as against its targets at λ = 1, not at λ < 1', { timeout: 120_000 }, async () => {
  const ev = async (lambda: number) => {
    const config = tabularConfig({ train: { steps: 3, checkpointEvery: 3 }, advantage: { lambda } });
    const runDir = mkdtempSync(join(tmpdir(), 'marft-mc-ev-'));
    const { bundle, engine } = await buildRun(config, runDir);
    const result = await train({ config, engine, task: bundle.task, runDir, progress: false });
    return result.metrics.map((m) => [m.explained_variance as number, m.explained_variance_targets as number]);
  };
  // λ = 1: the λ-returns are the Monte Carlo returns (GAE telescopes), so the two agree exactly.
  for (const [mc, targets] of await ev(1)) assert.equal(mc, targets);
  // λ = 0.5: the targets hold the critic's own values, and the two differ once the critic has moved off zero.
  const half = await ev(0.5);
  assert.ok(half.slice(1).some(([mc, targets]) => mc !== targets), JSON.stringify(half));
});
