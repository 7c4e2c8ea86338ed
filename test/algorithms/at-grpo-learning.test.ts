// AT-GRPO learns through marft's trainer (train(), algorithm at-grpo) on a small honest task: two
// agents (a then b) over two turns of the Flex-MG runtime, each writing one character; the
// environment pays each agent its character's code / 128 (role-local) and the team their sum, so
// α·team + local rewards higher characters. The policies are lookup tables (the tabular engine:
// every prompt prefix is its own state), the tree sampler draws K = 4 candidates per agent per
// turn. The check: the candidates' mean reward rises over a few steps, and the metrics of the
// zero-range filter are there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { tagGroups } from '../../src/train/episode-groups.ts';
import type { Task } from '../../src/train/task.ts';
import { train } from '../../src/run/train.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { engineSampler, rollout, sequentialGraph, treeRollout, withPolicies, type StepInput, type StepOutcome, type TaskEnv, type TurnScore, type Workflow } from '../../src/workflow/index.ts';

const tok = new CharTokenizer();
const value = (text: string): number => (text.length === 1 ? text.charCodeAt(0) / 128 : 0);

class CharEnv implements TaskEnv {
  private steps = 0;
  private last = 0;
  constructor(readonly problemId: string, readonly firstMessage: string) {}
  onStep(step: StepInput): StepOutcome {
    this.steps++;
    const local = Object.fromEntries(step.outputs.map((o) => [o.agent, value(o.text)]));
    this.last = Object.values(local).reduce((s, x) => s + x, 0);
    return { teamReward: this.last, perAgentReward: local, done: false };
  }
  finalScore() {
    return { score: this.last, info: { steps: this.steps } };
  }
  clone(): CharEnv {
    const c = new CharEnv(this.problemId, this.firstMessage);
    c.steps = this.steps;
    c.last = this.last;
    return c;
  }
}

const agent = (name: string) => ({ name, role: name, systemPrompt: '', roleDescription: name, policy: name });
const workflow: Workflow = {
  name: 'chars', agents: [agent('a'), agent('b')], graph: sequentialGraph(['a', 'b']), horizon: 2,
  observe: (ctx) => [{ role: 'user', content: `${ctx.problem}${ctx.t}${ctx.agent.name}` }],
};

function charTask(): Task {
  const play = (engine: TabularEngine, n: number, policies: Record<string, string>, seed: number, temperature: number, branches?: number, score?: TurnScore) => {
    const envs = Array.from({ length: n }, (_, i) => new CharEnv(`p${i % 2}`, `p${i % 2}`));
    const options = {
      sampler: engineSampler(engine), tokenizer: tok, criticView: false,
      params: { temperature, topP: 1, topK: 0, maxNewTokens: 1, stopTokenIds: [], stopStrings: [], seed },
    };
    const wf = withPolicies(workflow, policies);
    return branches === undefined ? rollout(wf, envs, options) : treeRollout(wf, envs, { ...options, branches, score: score! });
  };
  return {
    agents: ['a', 'b'],
    treeSampling: true,
    async rollout(engine, req) {
      const episodes = await play(engine as TabularEngine, req.batchSize, req.policies, req.seed, req.sampling.temperature, req.treeBranches, req.turnScore);
      return tagGroups(episodes, episodes.map((_, i) => i));
    },
    async evaluate(engine, req) {
      return play(engine as TabularEngine, 8, req.policies, req.seed, req.sampling.temperature);
    },
  };
}

test('AT-GRPO through the trainer: the candidates’ mean reward rises over a few steps', async () => {
  const steps = 12;
  const config = parseConfig({
    seed: 3, algorithm: 'at-grpo', model: { engine: 'tabular' },
    policy: { parameterSharing: false },
    actor: { klCoef: 0.01, optim: { lr: 0.5, schedule: 'constant', warmupRatio: 0 } },
    advantage: { dropFlatGroups: true },
    rollout: { batchSize: 8, rolloutsPerPrompt: 4, maxNewTokens: 1, temperature: 1 },
    train: { steps, checkpointEvery: 1000 },
  });
  const task = charTask();
  const engine = new TabularEngine(tok.vocabSize, tok.eosTokenIds);
  const { metrics, plan } = await train({ config, engine, task, runDir: mkdtempSync(join(tmpdir(), 'marft-atgrpo-')), progress: false });
  assert.equal(plan.sampling, 'tree');
  const reward = (m: (typeof metrics)[number]) => (Number(m['reward/a']) + Number(m['reward/b'])) / 2;
  const first = metrics.slice(0, 3).map(reward);
  const last = metrics.slice(-3).map(reward);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  for (const m of metrics) {
    assert.ok(Number.isFinite(Number(m.policy_loss)) && Number.isFinite(reward(m)), JSON.stringify(m));
    assert.ok(typeof m.flat_group_fraction === 'number' && m.flat_group_fraction >= 0 && m.flat_group_fraction <= 1);
    // No KL term: AT-GRPO's trainer has none, so actor.klCoef (0.01 here) is not read.
    assert.equal(m.kl, 0);
  }
  console.log(`AT-GRPO mean candidate reward, first 3 steps ${first.map((x) => x.toFixed(3))}, last 3 ${last.map((x) => x.toFixed(3))}`);
  assert.ok(mean(last) > mean(first) + 0.1, `first ${mean(first)}, last ${mean(last)}`);
});

test('a task without tree sampling is refused in one line', async () => {
  const config = parseConfig({ algorithm: 'at-grpo', model: { engine: 'tabular' }, rollout: { batchSize: 2, rolloutsPerPrompt: 2, maxNewTokens: 1 }, train: { steps: 1 } });
  const task = { ...charTask(), treeSampling: false };
  await assert.rejects(train({ config, engine: new TabularEngine(tok.vocabSize), task, runDir: mkdtempSync(join(tmpdir(), 'marft-atgrpo-')), progress: false }), (e: Error) => e.name === 'ConfigError' && /samples trees.*does not offer/.test(e.message) && !e.message.includes('\n'));
});
