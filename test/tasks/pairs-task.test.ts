// The "workflow" task with the multi-turn pairs and the reward options, scripted: the Reasoner /
// Tool-User pair (2 agents per role) runs the Tool-Users' programs in the sandbox and ends when all
// agree; the Coder / Tester pair on MBPP scores the Coder's program on the golden tests; role-local
// rewards replace the team reward with teamReward 'none' and localWeight 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkflowTask, type WorkflowTask } from '../../src/tasks/index.ts';
import type { CodeProblem, MathProblem, Problem } from '../../src/env/datasets/index.ts';
import { taskCharTokenizer } from '../../src/tasks/index.ts';
import { ScriptedSampler } from '../../src/workflow/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import type { RolloutRequest } from '../../src/train/task.ts';

const tok = taskCharTokenizer();
const fakeEngine = { config: { vocabSize: tok.vocabSize }, info: { vocabSize: tok.vocabSize } } as unknown as Engine;
const py = (code: string): string => `\`\`\`python\n${code}\n\`\`\``;

function withScript(options: Record<string, unknown>, reply: (p: Problem, agent: string, t: number, episode: number) => string): WorkflowTask {
  let index: Map<string, Problem> | undefined;
  const holder: { task?: WorkflowTask } = {};
  const sampler = new ScriptedSampler(tok, (input) => {
    index ??= new Map([...holder.task!.problems.train, ...holder.task!.problems.heldOut].map((p) => [p.id, p]));
    return reply(index.get(input.meta!.problemId)!, input.meta!.agent, input.meta!.t, input.meta!.episode);
  });
  holder.task = createWorkflowTask(options, { tokenizer: tok, sampler: () => sampler });
  return holder.task;
}

const req = (policies: Record<string, string>, batchSize = 2): RolloutRequest => ({ step: 0, seed: 21, batchSize, rolloutsPerPrompt: 1, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 4000 }, policies });

test('reasoner-tooluser with 2 agents per role on GSM8K: programs run, agreement ends the episode, the Reasoner\'s answer scores', { timeout: 120_000 }, async () => {
  // Episode 0: everyone gives the reference at t = 0 (done after one step, score 1). Episode 1: the
  // Reasoners are one off at t = 0 (disagreement, feedback) and fix it at t = 1 (done, score 1).
  const task = withScript({ dataset: 'gsm8k', workflow: 'reasoner-tooluser', agentsPerRole: 2, horizon: 4, programTimeoutMs: 10_000 }, (p, agent, t, episode) => {
    const ref = Number((p as MathProblem).answer.replace(/,/g, ''));
    const value = agent.startsWith('reasoner') && episode === 1 && t === 0 ? ref + 1 : ref;
    return agent.startsWith('reasoner') ? `Step by step.\n#### ${value}` : py(`print(${ref})`);
  });
  assert.deepEqual(task.agents, ['reasoner_1', 'reasoner_2', 'tool_user_1', 'tool_user_2']);
  const episodes = await task.rollout(fakeEngine, req({ reasoner_1: 'r', reasoner_2: 'r', tool_user_1: 't', tool_user_2: 't' }));
  assert.deepEqual(episodes.map((e) => e.steps.map((s) => [s.teamReward, s.done])), [[[1, true]], [[0, false], [1, true]]]);
  assert.deepEqual(episodes.map((e) => e.outcome), [1, 1]);
  assert.deepEqual(episodes[1]!.actions.map((a) => `${a.step}:${a.agent}:${a.policy}`), ['0:reasoner_1:r', '0:reasoner_2:r', '0:tool_user_1:t', '0:tool_user_2:t', '1:reasoner_1:r', '1:reasoner_2:r', '1:tool_user_1:t', '1:tool_user_2:t']);
  const feedback = episodes[1]!.steps[0]!.feedback!;
  assert.ok(!feedback.includes(`#### ${(task.problems.train.find((p) => p.id === episodes[1]!.problemId) as MathProblem).answer}\n`), 'the reference answer is not in feedback');
});

test('coder-tester on MBPP: the Coder\'s reference program passes the golden tests; the Tester\'s case is never the team program', { timeout: 120_000 }, async () => {
  const task = withScript({ dataset: 'mbpp', workflow: 'coder-tester', horizon: 2, programTimeoutMs: 10_000 }, (p, agent) =>
    agent === 'coder' ? py((p as CodeProblem).referenceSolution!) : '**Test Input:**\n```\n\n```\n**Test Output:**\n```\n\n```');
  assert.deepEqual(task.agents, ['coder', 'tester']);
  const episodes = await task.rollout(fakeEngine, req({ coder: 'c', tester: 't' }, 1));
  assert.equal(episodes[0]!.outcome, 1);
  assert.equal(episodes[0]!.info.teamAgent, 'coder');
  assert.ok(episodes[0]!.steps.every((s) => s.teamReward === 1));
});

test('each Reasoner/Tool-User action records its role-local reward (0.2·format + 0.8·correct; 0.1·runs + 0.1·parsable + 0.8·correct)', { timeout: 120_000 }, async () => {
  const task = withScript({ dataset: 'gsm8k', workflow: 'reasoner-tooluser', horizon: 1, programTimeoutMs: 10_000 }, (p, agent) => {
    const ref = (p as MathProblem).answer.replace(/,/g, '');
    return agent === 'reasoner' ? `No marker, the answer is ${Number(ref) + 1}.` : py(`print(${ref})`);
  });
  const [ep] = await task.rollout(fakeEngine, req({ reasoner: 'p', tool_user: 'p' }, 1));
  assert.equal(ep!.steps[0]!.teamReward, 0, "team answer: the Reasoner's (wrong)");
  assert.deepEqual(ep!.actions.map((a) => a.localReward), [0, 1]);
  const weighted = withScript({ dataset: 'gsm8k', workflow: 'reasoner-tooluser', horizon: 1, rewardWeights: { toolUser: { correct: 0.5 } } }, (p, agent) =>
    agent === 'reasoner' ? `#### ${(p as MathProblem).answer}` : 'no program');
  const [w] = await weighted.rollout(fakeEngine, req({ reasoner: 'p', tool_user: 'p' }, 1));
  assert.deepEqual(w!.actions.map((a) => a.localReward), [1, 0]);
  assert.equal(w!.steps[0]!.teamReward, 1);
});
