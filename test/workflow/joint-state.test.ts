// The centralised critic's input (src/workflow/joint-state.ts): the joint state of the step plus
// every earlier action of the step in chain order, whatever the acting agent itself observes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer, type ChatMessage } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, emptyGraph, rollout, type Agent, type ObservationContext, type Workflow } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();
const agent = (name: string, role = name.toUpperCase()): Agent => ({ name, role, systemPrompt: `I am ${name}`, roleDescription: '', policy: 'p' });
const ownView = (ctx: ObservationContext): ChatMessage[] => [
  { role: 'system', content: ctx.agent.systemPrompt },
  { role: 'user', content: [ctx.problem, ...ctx.visible.map((o) => `${o.agent} said ${o.text}`)].join('\n') },
];
const sayName = () => new ScriptedSampler(tok, (r) => `${r.meta!.agent}-says-${r.meta!.t}`);

test('two agents with D = 0: agent 2 critic input holds agent 1 action, its own prompt does not', async () => {
  const wf: Workflow = { name: 'parallel', agents: [agent('a'), agent('b')], graph: emptyGraph(), horizon: 1, observe: ownView };
  const [ep] = await rollout(wf, [new FakeEnv('p', 'PROBLEM', () => ({ teamReward: 1, done: true }))], { sampler: sayName(), tokenizer: tok, params: PARAMS });
  const [first, second] = ep!.actions;
  assert.equal(first!.agent, 'a');
  assert.equal(second!.agent, 'b');
  assert.ok(!tok.decode(second!.promptTokens).includes('a-says-0'), 'b acts in parallel with a: its own prompt cannot show a');
  const critic = tok.decode(second!.criticTokens!);
  assert.ok(critic.includes('a-says-0'), `the critic's view of b's state shows a's action: ${critic}`);
  assert.ok(!tok.decode(first!.criticTokens!).includes('says'), 'nothing has happened before the first action');
  // Exact rendering: the problem, then a's action under its role, then whose turn it is.
  assert.deepEqual(
    second!.criticTokens,
    tok.encodeChat([{ role: 'user', content: 'PROBLEM' }, { role: 'user', content: 'A' }, { role: 'assistant', content: 'a-says-0' }, { role: 'user', content: 'B' }], { addGenerationPrompt: true }),
  );
});

test('the critic input is rendered the same way whoever acts, and carries earlier turns and feedback', async () => {
  // A chain a → b whose observations differ per agent (b sees a; a does not see b): the joint state
  // of step 1 includes both outputs of step 0 and the feedback for both agents.
  const wf: Workflow = { name: 'chain', agents: [agent('a', 'Alpha'), agent('b', 'Beta')], graph: [['a', 'b']], horizon: 2, observe: ownView };
  const env = new FakeEnv('p', 'Q', (s) => ({ teamReward: 0, done: s.t === 1, feedback: `fb${s.t}`, feedbackFor: { b: 'only-b' } }));
  const [ep] = await rollout(wf, [env], { sampler: sayName(), tokenizer: tok, params: PARAMS });
  assert.equal(ep!.actions.length, 4);
  const step1a = tok.decode(ep!.actions[2]!.criticTokens!);
  const step1b = tok.decode(ep!.actions[3]!.criticTokens!);
  for (const text of ['Q', 'a-says-0', 'b-says-0', 'fb0', 'Beta: only-b']) assert.ok(step1a.includes(text), `${text} in ${step1a}`);
  // b's critic input is a's critic input with a's step-1 action appended and b's turn marker: one rendering.
  const prefix = tok.encodeChat([{ role: 'user', content: 'Q' }], { addGenerationPrompt: false });
  assert.deepEqual(ep!.actions[3]!.criticTokens!.slice(0, prefix.length), prefix);
  assert.ok(step1b.startsWith(step1a.slice(0, step1a.lastIndexOf('Alpha'))), 'the same history rendering for both agents');
  assert.ok(step1b.includes('a-says-1'));
});

test('criticView: false records no critic input', async () => {
  const wf: Workflow = { name: 'one', agents: [agent('a')], graph: emptyGraph(), horizon: 1, observe: ownView };
  const [ep] = await rollout(wf, [new FakeEnv('p', 'P', () => ({ teamReward: 1, done: true }))], { sampler: sayName(), tokenizer: tok, params: PARAMS, criticView: false });
  assert.equal(ep!.actions[0]!.criticTokens, undefined);
});
