// MAS-OPD's update through the training pipeline: each role's gradient reaches only its own adapter;
// a teacher with another tokenizer is refused; one whole training step runs on the lookup-table
// engine and reports the per-role metrics; a step's minibatches hold whole episodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { episodeMinibatches } from '../../src/core/batching.ts';
import { MathEnv } from '../../src/env/math-env.ts';
import { mathAttributor } from '../../src/opd/math-attributor.ts';
import type { DistillableTask } from '../../src/opd/distillable-task.ts';
import { assertSameTokenizer } from '../../src/opd/tokenizer-match.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { train } from '../../src/run/train.ts';
import type { TrainAction } from '../../src/train/types.ts';
import { actorUpdate } from '../../src/train/update/actor-update.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { reasonerToolUser } from '../../src/workflow/index.ts';
import type { ActionRecord } from '../../src/workflow/trajectory.ts';
import type { RunOutcome } from '../../src/sandbox/index.ts';

const config = parseConfig({ algorithm: 'mas-opd', actor: { optim: { lr: 0.1, schedule: 'constant', warmupRatio: 0 } } });

/** One 2-token response of `role` with advantages teacher − student = [−1, −3] − [−2, −2] = [+1, −1]. */
function response(role: string, policy: string, episode: number): TrainAction {
  const record = { agent: role.toLowerCase(), agentIndex: 0, step: 0, policy, promptTokens: [9, 10, 11], actionTokens: [12, 13], behaviourLogprobs: [-2, -2], stopReason: 'stop_token', text: '' } as ActionRecord;
  return {
    record, episode, t: 0, agentIndex: 0, agent: record.agent, role, policy, critic: null, group: null, joint: null,
    tokens: [9, 10, 11, 12, 13], criticTokens: [9, 10, 11], scoreFrom: 3, length: 2, text: '', behaviourLogprobs_K: Float32Array.of(-2, -2),
    learnerReward: 0, reward: 0, scale: 1, values_K: new Float32Array(0), advantages_K: Float64Array.of(1, -1), returns_K: Float64Array.of(1, -1),
  };
}

test("each role's gradient reaches only its own adapter", async () => {
  const engine = new TabularEngine(20);
  await engine.createAdapter('opd-reasoner', { rank: 1, alpha: 1, targetModules: [] }, 0);
  await engine.createAdapter('opd-tool-user', { rank: 1, alpha: 1, targetModules: [] }, 0);
  const seq = [{ tokens: [9, 10, 11, 12, 13], scoreFrom: 3 }];
  const before = {
    r: (await engine.forward({ kind: 'adapter', name: 'opd-reasoner' }, seq)).logprobs![0]!,
    t: (await engine.forward({ kind: 'adapter', name: 'opd-tool-user' }, seq)).logprobs![0]!,
  };
  const only = [response('Reasoner', 'opd-reasoner', 0)];
  await actorUpdate(engine, only, { level: 'token', policyLoss: 'importance-weighted-pg', kl: false, aggregation: 'role-turn-token-mean' }, config, 0.1, [[only]]);
  const after = {
    r: (await engine.forward({ kind: 'adapter', name: 'opd-reasoner' }, seq)).logprobs![0]!,
    t: (await engine.forward({ kind: 'adapter', name: 'opd-tool-user' }, seq)).logprobs![0]!,
  };
  assert.deepEqual(Array.from(after.t), Array.from(before.t), "the Tool-User's adapter is untouched");
  // A = teacher − student = [+1, −1]: the first token's log-prob rises, the second's falls.
  assert.ok(after.r[0]! > before.r[0]! && after.r[1]! < before.r[1]!, `reasoner ${Array.from(before.r)} -> ${Array.from(after.r)}`);
});

test('a teacher whose tokenizer differs from the students is refused with a one-line error', () => {
  assert.throws(() => assertSameTokenizer(new CharTokenizer('abc'), new CharTokenizer('abd')), (e: Error) => {
    assert.equal(e.name, 'ConfigError');
    assert.match(e.message, /^teacher: its tokenizer differs from the students' \(token id 10 is "c" for the students and "d" for the teacher\)/);
    assert.ok(!e.message.includes('\n'));
    return true;
  });
  assert.throws(() => assertSameTokenizer(new CharTokenizer('abc'), new CharTokenizer('ab')), /vocabulary sizes differ \(students 11, teacher 10\)/);
  assertSameTokenizer(new CharTokenizer('abc'), new CharTokenizer('abc'));
});

test('one training step on the lookup-table engine: per-role metrics, PAC fractions, two minibatches', async () => {
  const tokenizer = new CharTokenizer();
  const student = new TabularEngine(tokenizer.vocabSize, tokenizer.eosTokenIds);
  const teacher = new TabularEngine(tokenizer.vocabSize, tokenizer.eosTokenIds);
  const runProgram = async (): Promise<RunOutcome> => ({ status: 'ok', exitCode: 0, signal: null, stdout: '3\n', stderr: '', wallMs: 1 }) as RunOutcome;
  const workflow = reasonerToolUser({ horizon: 2 });
  const task: DistillableTask = {
    agents: workflow.agents.map((a) => a.name),
    rollout: async () => [],
    evaluate: async () => [],
    distillation: () => ({
      workflow, tokenizer, attribute: mathAttributor,
      trainEnvs: (count) => Array.from({ length: count }, (_, i) => new MathEnv({ domain: 'math', id: `p${i}`, dataset: 'test', question: '1+2', answer: '3', meta: {} }, { runProgram })),
    }),
  };
  const stepConfig = parseConfig({ ...config, seed: 3, train: { steps: 1 }, rollout: { batchSize: 2, maxNewTokens: 6 }, opd: { minibatchSize: 1 } });
  const result = await train({ config: stepConfig, engine: student, teacher, task, runDir: mkdtempSync(join(tmpdir(), 'marft-opd-step-')), progress: false });
  assert.deepEqual(result.plan.policies, { reasoner: 'opd-reasoner', tool_user: 'opd-tool-user' });
  const m = result.metrics[0]!;
  for (const key of ['a_opd_reasoner', 'a_role_tool_user', 'teacher_logprob_reasoner', 'student_logprob_tool_user', 'policy_loss', 'grad_norm_actor', 'importance_weight_mean']) {
    assert.equal(typeof m[key], 'number', key);
    assert.ok(Number.isFinite(m[key] as number), key);
  }
  // The uniform teacher gives every token log(1/V); the student samples from the same uniform base.
  const uniform = -Math.log(tokenizer.vocabSize);
  assert.ok(Math.abs((m.teacher_logprob_reasoner as number) - uniform) < 1e-5);
  assert.ok(Math.abs(m.a_opd_reasoner as number) < 1e-5);
  // Random tokens hold no #### answer and no program block: every turn is BOTH_INCONSISTENT.
  assert.equal(m.pac_both_inconsistent, 1);
  assert.equal(result.metrics.length, 1);
});

test('minibatches split by episode: a step of 5 episodes in minibatches of 2 gives 3, each episode whole', () => {
  const responses = [0, 0, 1, 2, 2, 3, 4].map((e, k) => response(k % 2 ? 'Reasoner' : 'Tool-User', 'p', e));
  const mbs = episodeMinibatches(responses, (a) => a.episode, 5, 2, 7);
  assert.equal(mbs.length, 3);
  assert.deepEqual(mbs.flat().sort((a, b) => responses.indexOf(a) - responses.indexOf(b)), responses);
  for (const e of [0, 2]) assert.equal(mbs.filter((mb) => mb.some((r) => r.episode === e)).length, 1, `episode ${e} is in one minibatch`);
  assert.deepEqual(episodeMinibatches(responses, (a) => a.episode, 5, 8, 7), [responses]);
});
