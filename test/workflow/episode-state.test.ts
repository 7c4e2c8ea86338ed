// Copies of an episode's state (src/workflow/episode-state.ts): independent of each other, and
// continued by the runtime (runEpisodes) from where the original stood, as branching samplers need.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MathEnv } from '../../src/env/math-env.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { EpisodeState, ScriptedSampler, runEpisodes, singleAgentMultiTurn, WorkflowError, type StepInput, type StepOutcome, type TaskEnv } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

/** A FakeEnv that can be copied: the copy has its own record of what it has seen. */
class CopyableEnv extends FakeEnv implements TaskEnv {
  constructor(problemId: string, firstMessage: string, outcome?: (step: StepInput) => StepOutcome) {
    super(problemId, firstMessage, outcome);
  }
  clone(): CopyableEnv {
    const copy = new CopyableEnv(this.problemId, this.firstMessage);
    copy.seen.push(...structuredClone(this.seen));
    return copy;
  }
}

/** A single-agent episode after its first turn ("I think 5."), about to start turn 1. */
function afterFirstTurn(): EpisodeState {
  const env = new CopyableEnv('p', 'What is 2+2?');
  const outputs = [{ agent: 'reasoner', role: 'Reasoner', text: 'I think 5.\n#### 5' }];
  env.onStep({ t: 0, outputs });
  const s = new EpisodeState(env, 0);
  s.actions.push({ agent: 'reasoner', agentIndex: 0, step: 0, policy: 'solo', promptTokens: [1, 2, 3], actionTokens: [4, 5], behaviourLogprobs: [-1, -2], stopReason: 'stop_token', text: outputs[0]!.text, localReward: 0, criticTokens: [1, 2] });
  s.steps.push({ t: 0, teamReward: 0, done: false });
  s.history.push({ t: 0, outputs: structuredClone(outputs), feedbackFor: { reasoner: 'check your sum' } });
  s.t = 1;
  s.plan = { levels: [['reasoner']], preds: new Map([['reasoner', new Set<string>()]]), edges: [] };
  s.stepActionsFrom = 1;
  return s;
}

test('copies of an episode state share nothing mutable: mutating one changes neither the original nor the other copy', () => {
  const original = afterFirstTurn();
  const snapshot = structuredClone({ actions: original.actions, steps: original.steps, history: original.history, plan: original.plan, seen: (original.env as CopyableEnv).seen });
  const a = original.copy(1);
  const b = original.copy(2);
  assert.deepEqual([a.episode, b.episode, a.t, a.stepActionsFrom], [1, 2, 1, 1]);
  assert.deepEqual(a.actions, original.actions);
  // Mutate every part of copy a, deep inside.
  a.actions[0]!.actionTokens.push(99);
  a.actions[0]!.criticTokens!.push(99);
  a.actions.push({ ...a.actions[0]!, step: 1 });
  a.steps[0]!.teamReward = 7;
  a.history[0]!.outputs[0]!.text = 'changed';
  a.history[0]!.feedbackFor!.reasoner = 'changed';
  a.plan!.levels[0]!.push('intruder');
  a.plan!.preds.get('reasoner')!.add('intruder');
  a.outputs.push({ agent: 'reasoner', role: 'Reasoner', text: 'x' });
  a.env.onStep({ t: 1, outputs: [{ agent: 'reasoner', role: 'Reasoner', text: 'x' }] });
  for (const other of [original, b]) {
    assert.deepEqual(
      structuredClone({ actions: other.actions, steps: other.steps, history: other.history, plan: other.plan, seen: (other.env as CopyableEnv).seen }),
      snapshot,
    );
    assert.deepEqual(other.outputs, []);
  }
  assert.notEqual(a.env, original.env);
});

test('an environment without clone cannot branch; the maths environment copies its state', async () => {
  const s = new EpisodeState(new FakeEnv('p', 'q'), 0);
  assert.throws(() => s.copy(), (e: Error) => e instanceof WorkflowError && /problem 'p' cannot be copied \(it has no TaskEnv\.clone\)/.test(e.message));
  const env = new MathEnv({ domain: 'math', id: 'm1', dataset: 'test', question: 'What is 2+2?', answer: '4', meta: {} });
  await env.onStep({ t: 0, outputs: [{ agent: 'reasoner', role: 'Reasoner', text: '#### 4' }] });
  const copy = env.clone();
  assert.deepEqual(copy.finalScore(), env.finalScore());
  await copy.onStep({ t: 1, outputs: [{ agent: 'reasoner', role: 'Reasoner', text: '#### 5' }] });
  assert.equal(env.finalScore().score, 1, 'the original still holds its correct answer');
  assert.equal(copy.finalScore().score, 0);
});

test('the runtime continues K copies of a mid-episode state, each from the same history, with its own actions', async () => {
  const original = afterFirstTurn();
  const copies = [0, 1, 2].map((k) => original.copy(k));
  // Turn 1: copy k answers k + 3; the episode stops at the horizon (2 turns).
  const wf = { ...singleAgentMultiTurn({ domain: 'math' }), horizon: 2 };
  const sampler = new ScriptedSampler(tok, (r) => `#### ${r.meta!.episode + 3}`);
  const episodes = await runEpisodes(wf, copies, { sampler, tokenizer: tok, params: PARAMS, criticView: false });
  assert.equal(episodes.length, 3);
  episodes.forEach((ep, k) => {
    // The shared first turn, then the copy's own second turn, which saw the shared history.
    assert.deepEqual(ep.actions.map((a) => [a.step, a.text]), [[0, 'I think 5.\n#### 5'], [1, `#### ${k + 3}`]]);
    assert.ok(tok.decode(ep.actions[1]!.promptTokens).includes('I think 5.'));
    assert.deepEqual(ep.steps.map((s) => s.done), [false, true]);
    assert.deepEqual((copies[k]!.env as CopyableEnv).seen.map((s) => s.outputs[0]!.text), ['I think 5.\n#### 5', `#### ${k + 3}`]);
  });
  // The original was not advanced.
  assert.equal(original.actions.length, 1);
  assert.equal((original.env as CopyableEnv).seen.length, 1);
  await assert.rejects(runEpisodes(wf, [copies[0]!], { sampler, tokenizer: tok, params: PARAMS }), /finished episode cannot be continued/);
});
