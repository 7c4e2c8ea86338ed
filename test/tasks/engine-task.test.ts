// The "workflow" task with the real embedded engine on the tiny random model it builds itself: a
// GSM8K Duo sampled through engineSampler, rewards equal to the verifier on the decoded text, the
// same (seed, step) giving the same episodes, and a tokenizer/model mismatch caught before sampling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskOptionError, workflowTask, WorkflowTask } from '../../src/tasks/index.ts';
import { MathEnv } from '../../src/env/index.ts';
import type { MathProblem } from '../../src/env/datasets/index.ts';
import { mathAnswersEqual } from '../../src/verify/math/index.ts';
import { createEngine } from '../../src/engine/index.ts';
import { tinyModelConfig } from '../../src/tasks/tiny-model.ts';
import { CharTokenizer, DEFAULT_ALPHABET } from '../../src/tokenizer/index.ts';
import type { RolloutRequest } from '../../src/train/task.ts';

test('GSM8K Duo on the embedded engine: rewards are the verifier on the sampled text; reproducible from (seed, step)', { timeout: 120_000 }, async () => {
  const bundle = workflowTask({ dataset: 'gsm8k', workflow: 'duo', maxProblemTokens: 200, hiddenSize: 32 });
  const task = bundle.task as WorkflowTask;
  assert.equal(bundle.vocabSize, 105, 'printable ASCII, newline and tab, after 8 special tokens');
  assert.equal(task.tokenizer.decode(task.tokenizer.encode('def f():\n\treturn 1')), 'def f():\n\treturn 1', 'tabs (MBPP indents with them) survive');
  const engine = await bundle.buildEngine!(5);
  assert.equal(engine.info.vocabSize, bundle.vocabSize);
  await engine.createAdapter('shared', { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] }, 1);
  const req: RolloutRequest = { step: 2, seed: 77, batchSize: 2, rolloutsPerPrompt: 2, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 24 }, policies: { planner: 'shared', solver: 'shared' } };
  const episodes = await task.rollout(engine, req);
  assert.equal(episodes.length, 4);
  for (const ep of episodes) {
    const problem = task.problems.train.find((p) => p.id === ep.problemId) as MathProblem;
    assert.ok(problem && task.tokenizer.encode(problem.question).length <= 200, 'a training problem within maxProblemTokens');
    assert.deepEqual(ep.actions.map((a) => [a.agent, a.policy]), [['planner', 'shared'], ['solver', 'shared']]);
    for (const a of ep.actions) {
      assert.ok(a.actionTokens.length >= 1 && a.actionTokens.length <= 24);
      assert.equal(a.behaviourLogprobs.length, a.actionTokens.length);
      assert.ok(a.behaviourLogprobs.every((lp) => lp <= 0 && Number.isFinite(lp)));
    }
    const solver = ep.actions[1]!;
    // The Solver sees the Planner's exact tokens inside its prompt.
    const plannerTokens = ep.actions[0]!.actionTokens.slice(0, ep.actions[0]!.stopReason === 'stop_token' ? -1 : undefined);
    assert.ok(task.tokenizer.decode(solver.promptTokens).includes(task.tokenizer.decode(plannerTokens)));
    const extracted = MathEnv.textAnswer(solver.text);
    const verdict = extracted !== null && mathAnswersEqual(problem.answer, extracted) ? 1 : 0;
    assert.equal(ep.steps[0]!.teamReward, verdict);
    assert.equal(ep.outcome, verdict);
    assert.deepEqual(ep.actions.map((a) => a.localReward), [0, 0], 'no role-local reward in the Duo');
  }
  const again = await task.rollout(engine, req);
  assert.deepEqual(again.map((e) => e.actions.map((a) => a.actionTokens)), episodes.map((e) => e.actions.map((a) => a.actionTokens)));

  const narrow = createEngine(tinyModelConfig(new CharTokenizer('0123456789'), { hiddenSize: 8, layers: 1, contextLength: 64 }), { seed: 1 });
  await assert.rejects(task.rollout(narrow, req), (e) => e instanceof TaskOptionError && /the model's vocabulary \(18\) is smaller than the tokenizer's \(105\)/.test(e.message));
  const wide = createEngine(tinyModelConfig(new CharTokenizer(DEFAULT_ALPHABET + '\tλ'), { hiddenSize: 8, layers: 1, contextLength: 64 }), { seed: 1 });
  await assert.rejects(task.rollout(wide, req), (e) => e instanceof TaskOptionError && /task\.options\.tokenizer is 'char' \(105 ids\) but the model has 106: set task\.options\.tokenizer to the model folder/.test(e.message));
});
