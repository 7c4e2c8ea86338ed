// The centralised critic's input (ActionRecord.criticTokens, src/workflow/joint-state.ts) is rendered
// only when a critic reads it: the trainer asks the task not to render it for the critic-free
// algorithms (RolloutRequest.criticView: false), the workflow task passes that to the runtime
// (RolloutOptions.criticView), and MAS-OPD's rollout never renders it. MARFT's records keep it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGORITHM_REGISTRY } from '../../src/algorithms/index.ts';
import { ALGORITHMS } from '../../src/config/choices.ts';
import { parseConfig } from '../../src/config/load.ts';
import type { Engine } from '../../src/engine/types.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import type { RolloutRequest, Sampling, Task } from '../../src/train/task.ts';
import { turnScore } from '../../src/train/rewards.ts';
import { train } from '../../src/run/train.ts';
import { createWorkflowTask, taskCharTokenizer, type WorkflowTask } from '../../src/tasks/index.ts';
import { ScriptedSampler } from '../../src/workflow/index.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';

class Asked extends Error {}

test('the trainer asks for no critic input exactly when the algorithm has no critic', async () => {
  for (const algorithm of ALGORITHMS) {
    const config = parseConfig({ algorithm, model: { engine: 'tabular' }, rollout: { batchSize: 1, rolloutsPerPrompt: 2 }, train: { steps: 1 } });
    const plan = ALGORITHM_REGISTRY[algorithm].plan(['a', 'b'], config);
    if (plan.rollout) continue; // its own rollout (below)
    let asked: RolloutRequest | undefined;
    const task: Task = {
      agents: ['a', 'b'], treeSampling: true, rewardSchemes: ['cure'],
      rollout: async (_e, req) => {
        asked = req;
        throw new Asked();
      },
      evaluate: async () => [],
    };
    await assert.rejects(train({ config, engine: new TabularEngine(8), task, runDir: mkdtempSync(join(tmpdir(), 'marft-cv-')), progress: false }), Asked);
    assert.equal(asked!.criticView !== false, plan.critics !== null, `${algorithm}: criticView ${asked!.criticView}, critics ${JSON.stringify(plan.critics)}`);
  }
});

const tok = taskCharTokenizer();
const SAMPLING: Sampling = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 200 };
const fakeEngine = { config: { vocabSize: tok.vocabSize }, info: { vocabSize: tok.vocabSize } } as unknown as Engine;

function duo(): WorkflowTask {
  const sampler = new ScriptedSampler(tok, (input) => (input.meta!.agent === 'planner' ? 'Add them.' : `The answer is \\boxed{${input.meta!.episode}}.`));
  return createWorkflowTask({ dataset: 'gsm8k', workflow: 'duo', horizon: 2 }, { tokenizer: tok, sampler: () => sampler });
}

const records = (episodes: Episode[]) => episodes.flatMap((e) => [...e.actions, ...(e.candidates ?? [])]);

test('the workflow task renders the critic input unless asked not to, for group and tree sampling', async () => {
  const task = duo();
  const base: RolloutRequest = { step: 0, seed: 3, batchSize: 2, rolloutsPerPrompt: 2, sampling: SAMPLING, policies: { planner: 'p', solver: 'p' } };
  for (const extra of [{}, { treeBranches: 2, turnScore: turnScore(parseConfig({}).reward) }]) {
    const withView = records(await task.rollout(fakeEngine, { ...base, ...extra }));
    const without = records(await task.rollout(fakeEngine, { ...base, ...extra, criticView: false }));
    assert.ok(withView.length >= 8 && withView.every((a) => Array.isArray(a.criticTokens) && a.criticTokens.length > a.actionTokens.length), 'MARFT reads it: every record carries it');
    assert.ok(without.every((a) => a.criticTokens === undefined), 'critic-free: no record carries it');
    // Nothing else changes: the same actions, rewards and behaviour log-probs.
    const strip = (xs: typeof withView) => xs.map(({ criticTokens: _c, ...rest }) => rest);
    assert.deepEqual(strip(without), strip(withView));
  }
});

test('MAS-OPD rollouts carry no critic input', async () => {
  const task = duo();
  const plan = ALGORITHM_REGISTRY['mas-opd'].plan(task.agents, parseConfig({ algorithm: 'mas-opd' }), task);
  const engine = new TabularEngine(tok.vocabSize);
  for (const name of new Set(Object.values(plan.policies))) await engine.createAdapter(name, { rank: 1, alpha: 1, targetModules: [] }, 1);
  const episodes = await plan.rollout!(engine, { step: 0, seed: 5, batchSize: 2, rolloutsPerPrompt: 1, sampling: { ...SAMPLING, maxNewTokens: 3 }, policies: plan.policies });
  assert.ok(records(episodes).length >= 4);
  assert.ok(records(episodes).every((a) => a.criticTokens === undefined));
});
