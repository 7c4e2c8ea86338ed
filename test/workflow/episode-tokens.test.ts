import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import {
  ScriptedSampler,
  actionLossMask,
  actionSequence,
  actionSpans,
  checkEpisode,
  coderTester,
  reasonerToolUser,
  rollout,
  sequentialPipeline,
  singleAgentMultiTurn,
  singleAgentSingleTurn,
  type Workflow,
} from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

test('loss masks, action spans and the contract check on a two-turn Coder–Tester episode', async () => {
  const sampler = new ScriptedSampler(tok, (r) => (r.meta!.agent === 'coder' ? 'print(1)' : 'in 1 out 1'));
  const env = new FakeEnv('p', 'P', (s) => ({ teamReward: 0, done: s.t === 1 }));
  const [ep] = await rollout(coderTester(), [env], { sampler, tokenizer: tok, params: PARAMS });
  checkEpisode(ep!);
  const a = ep!.actions[2]!;
  const mask = actionLossMask(a);
  assert.equal(mask.length, a.promptTokens.length + a.actionTokens.length);
  assert.equal(mask.indexOf(1), a.promptTokens.length);
  assert.equal(mask.reduce((s, x) => s + x, 0), 9); // "print(1)" + <|end|>
  assert.equal(actionSequence(a).scoreFrom, a.promptTokens.length);
  assert.deepEqual(actionSpans(ep!).map((s) => [s.agent, s.step, s.agentIndex, s.start, s.end]), [
    ['coder', 0, 0, 0, 9],
    ['tester', 0, 1, 9, 20],
    ['coder', 1, 0, 20, 29],
    ['tester', 1, 1, 29, 40],
  ]);
  const broken = { ...ep!, actions: [ep!.actions[1]!, ep!.actions[0]!] };
  assert.throws(() => checkEpisode(broken), /action 0: out of execution order/);
  const short = { ...ep!, actions: [{ ...ep!.actions[0]!, behaviourLogprobs: [] }] };
  assert.throws(() => checkEpisode(short), /0 behaviour logprobs for 9 action tokens/);
});

test('every built-in workflow yields contract-valid episodes (many environments, uneven lengths)', async () => {
  const workflows: Workflow[] = [
    ...(['math', 'code'] as const).flatMap((domain) =>
      (['duo', 'trio', 'quad'] as const).flatMap((size) => [false, true].map((anonymous) => sequentialPipeline({ domain, size, anonymous }))),
    ),
    coderTester(),
    reasonerToolUser({ agentsPerRole: 3 }),
    singleAgentSingleTurn({ domain: 'code' }),
    singleAgentMultiTurn({ domain: 'math' }),
  ];
  for (const wf of workflows) {
    const sampler = new ScriptedSampler(tok, (r) => `${r.meta!.agent}:${r.meta!.t}`);
    // Environment k agrees at step k, so episodes end at different steps.
    const envs = [0, 1, 2, 3, 4].map((k) => new FakeEnv(`p${k}`, `problem ${k}`, (s) => ({ teamReward: s.t, done: s.t === k })));
    const episodes = await rollout(wf, envs, { sampler, tokenizer: tok, params: PARAMS, maxInFlight: 3 });
    episodes.forEach((ep, k) => {
      checkEpisode(ep);
      assert.equal(ep.steps.length, Math.min(k + 1, wf.horizon), `${wf.name} episode ${k}`);
      assert.equal(ep.actions.length, ep.steps.length * wf.agents.length);
      for (const a of ep.actions) assert.equal(a.text, `${a.agent}:${a.step}`);
    });
  }
});
