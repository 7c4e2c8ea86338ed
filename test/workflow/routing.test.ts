// D replaced per step by a router function or an orchestrator agent; custom graphs (a diamond).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer, type ChatMessage } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, WorkflowError, rollout, type Agent, type Edge, type ObservationContext, type Workflow } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

const agent = (name: string): Agent => ({ name, role: name.toUpperCase(), systemPrompt: `I am ${name}`, roleDescription: '', policy: 'shared' });

/** Shows the agent the problem and the visible outputs as "name: text" lines. */
const listObservation = (ctx: ObservationContext): ChatMessage[] => [
  { role: 'system', content: ctx.agent.systemPrompt },
  { role: 'user', content: [ctx.problem, ...ctx.visible.map((o) => `${o.agent}: ${o.text}`)].join('\n') },
];

const base = (extra: Partial<Workflow>): Workflow => ({
  name: 'custom',
  agents: ['a', 'b', 'c', 'd'].map(agent),
  graph: [['a', 'b'], ['a', 'c'], ['b', 'd'], ['c', 'd']],
  horizon: 1,
  observe: listObservation,
  ...extra,
});

const sayName = () => new ScriptedSampler(tok, (r) => `${r.meta!.agent}${r.meta!.t}`);

test('a diamond DAG runs level by level: b and c act in one round and see a, not each other; d sees b and c', async () => {
  const sampler = sayName();
  const [ep] = await rollout(base({}), [new FakeEnv('p', 'P')], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => r.meta!.agent)), [['a'], ['b', 'c'], ['d']]);
  assert.deepEqual(ep!.actions.map((x) => [x.agent, x.agentIndex]), [['a', 0], ['b', 1], ['c', 2], ['d', 3]]);
  const seen = (k: number) => tok.decode(ep!.actions[k]!.promptTokens).split('<|user|>')[1]!.replace('<|end|><|assistant|>', '');
  assert.equal(seen(1), 'P\na: a0');
  assert.equal(seen(2), 'P\na: a0');
  assert.equal(seen(3), 'P\nb: b0\nc: c0');
});

test('a router replaces D per step: execution order and visibility follow the step graph', async () => {
  const graphs: Edge[][] = [
    [['a', 'b'], ['b', 'c'], ['c', 'd']],
    [['d', 'c'], ['c', 'b'], ['b', 'a']],
  ];
  const wf = base({ horizon: 2, router: ({ t }) => graphs[t]! });
  const sampler = sayName();
  const [ep] = await rollout(wf, [new FakeEnv('p', 'P')], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.actions.map((x) => `${x.agent}${x.step}#${x.agentIndex}`), ['a0#0', 'b0#1', 'c0#2', 'd0#3', 'd1#0', 'c1#1', 'b1#2', 'a1#3']);
  assert.ok(tok.decode(ep!.actions[7]!.promptTokens).includes('P\nb: b1<|end|>'));
  assert.deepEqual(ep!.info.workflow, { graphs, orchestratorFallbacks: 0 });
  const cyclic = base({ router: () => [['a', 'b'], ['b', 'a']] });
  await assert.rejects(rollout(cyclic, [new FakeEnv('p', 'P')], { sampler: sayName(), tokenizer: tok, params: PARAMS }), WorkflowError);
});

test('an orchestrator agent acts first and its output sets D; malformed output falls back to the default graph', async () => {
  // The orchestrator writes edges "x>y,..."; at step 1 it writes a cycle.
  const wf = base({
    horizon: 2,
    orchestrator: {
      agent: { name: 'boss', role: 'Orchestrator', systemPrompt: 'route', roleDescription: '', policy: 'boss' },
      observe: ({ t, problem }) => [{ role: 'user', content: `${problem} step ${t}` }],
      parse: (text) => text.split(',').map((e) => e.split('>') as unknown as Edge),
    },
  });
  const sampler = new ScriptedSampler(tok, (r) => (r.meta!.agent === 'boss' ? (r.meta!.t === 0 ? 'd>a' : 'a>b,b>a') : r.meta!.agent));
  const env = new FakeEnv('p', 'P', () => ({ teamReward: 1, done: false }));
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => r.meta!.agent).join('')), ['boss', 'bcd', 'a', 'boss', 'a', 'bc', 'd']);
  assert.deepEqual(ep!.actions.map((x) => `${x.agent}${x.step}#${x.agentIndex}`), [
    'boss0#0', 'b0#1', 'c0#2', 'd0#3', 'a0#4',
    'boss1#0', 'a1#1', 'b1#2', 'c1#3', 'd1#4',
  ]);
  assert.equal(ep!.actions[0]!.policy, 'boss');
  // The orchestrator's text is not an agent output; the environment sees the four agents only.
  assert.deepEqual(env.seen[0]!.outputs.map((o) => o.agent), ['b', 'c', 'd', 'a']);
  assert.deepEqual(ep!.info.workflow, { graphs: [[['d', 'a']], base({}).graph], orchestratorFallbacks: 1 });
  // The orchestrator's action is one of the step's actions like every other (the trainer gives each its share of the step's team reward).
  assert.deepEqual(ep!.steps.map((s) => s.teamReward), Array(ep!.steps.length).fill(1));
  assert.deepEqual(ep!.actions.map((x) => x.localReward), Array(10).fill(0));
});

test('workflow validation: no agents, bad horizon, router with orchestrator, invalid default D', async () => {
  const run = (wf: Workflow) => rollout(wf, [new FakeEnv('p', 'P')], { sampler: sayName(), tokenizer: tok, params: PARAMS });
  await assert.rejects(run(base({ agents: [] })), /has no agents/);
  await assert.rejects(run(base({ horizon: 0 })), /horizon must be a positive integer/);
  await assert.rejects(run(base({ graph: [['a', 'zz']] })), /unknown agent 'zz'/);
  const orchestrator = { agent: agent('a'), observe: () => [], parse: () => null };
  await assert.rejects(run(base({ router: () => [], orchestrator })), /router or an orchestrator, not both/);
  await assert.rejects(run(base({ orchestrator })), /must not also be a workflow agent/);
});
