// Sequential pipelines (Duo/Trio/Quad, maths and code, prescribed and anonymous) with a scripted policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer, type ChatMessage } from '../../src/tokenizer/index.ts';
import { ScriptedSampler, defaultScriptedLogprob, rollout, sequentialPipeline, turnMessage, withPolicies } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();
const END = tok.specialId('<|end|>');

/** Each agent replies "<agent> on <problem id>", so every output is traceable. */
function echoSampler() {
  return new ScriptedSampler(tok, (req) => `${req.meta!.agent} on ${req.meta!.problemId}`);
}

test('Trio (maths): message order, who sees what, exact token ids, logprobs, boundaries and rewards', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'trio' });
  assert.deepEqual(wf.agents.map((a) => [a.name, a.role, a.policy]), [
    ['planner', 'Planner', 'planner'],
    ['solver', 'Solver', 'solver'],
    ['verifier', 'Verifier', 'verifier'],
  ]);
  const env = new FakeEnv('p1', 'What is 2+3?', () => ({ teamReward: 1, done: false }));
  const sampler = echoSampler();
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS, keepMessages: true });

  const [planner, solver, verifier] = wf.agents;
  const expected: ChatMessage[][] = [
    [
      { role: 'system', content: planner!.systemPrompt },
      { role: 'user', content: 'What is 2+3?' },
    ],
    [
      { role: 'system', content: solver!.systemPrompt },
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: 'planner on p1' },
      { role: 'user', content: "Now it is Solver's turn. Executes the plan and produces the final answer." },
    ],
    [
      { role: 'system', content: verifier!.systemPrompt },
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: 'planner on p1' },
      { role: 'user', content: "Now it is Solver's turn. Executes the plan and produces the final answer." },
      { role: 'assistant', content: 'solver on p1' },
      { role: 'user', content: "Now it is Verifier's turn. Verifies or corrects the solver's answer." },
    ],
  ];
  assert.equal(ep!.actions.length, 3);
  ep!.actions.forEach((a, k) => {
    const name = wf.agents[k]!.name;
    assert.equal(a.agent, name);
    assert.equal(a.agentIndex, k);
    assert.equal(a.step, 0);
    assert.equal(a.policy, name);
    assert.deepEqual(a.promptTokens, tok.encodeChat(expected[k]!, { addGenerationPrompt: true }));
    assert.deepEqual(a.actionTokens, [...tok.encode(`${name} on p1`), END]);
    assert.deepEqual(a.behaviourLogprobs, a.actionTokens.map((_, i) => defaultScriptedLogprob(i)));
    assert.equal(a.stopReason, 'stop_token');
    assert.equal(a.text, `${name} on p1`);
    assert.equal(a.localReward, 0);
  });
  // The prompt ends where the reply begins, and the last prompt token is <|assistant|>.
  assert.equal(ep!.actions[2]!.promptTokens.at(-1), tok.specialId('<|assistant|>'));
  assert.deepEqual(ep!.steps, [{ t: 0, teamReward: 1, done: true }]);
  assert.deepEqual(env.seen, [
    {
      t: 0,
      outputs: [
        { agent: 'planner', role: 'Planner', text: 'planner on p1' },
        { agent: 'solver', role: 'Solver', text: 'solver on p1' },
        { agent: 'verifier', role: 'Verifier', text: 'verifier on p1' },
      ],
    },
  ]);
  assert.deepEqual([ep!.problemId, ep!.outcome, ep!.info], ['p1', 1, { steps: 1, observations: expected }]);
  // Three rounds, one request each; the tokenizer's eos ids are the stop tokens; seeds differ by round.
  assert.deepEqual(sampler.calls.map((c) => c.requests.length), [1, 1, 1]);
  assert.deepEqual(sampler.calls[0]!.params.stopTokenIds, [END, tok.specialId('<eos>')]);
  assert.deepEqual(sampler.calls.map((c) => c.params.seed), [100, 101, 102]);
});

test('Duo / Trio / Quad role descriptions and turn messages, maths and code (spec section 2)', () => {
  const turns = (domain: 'math' | 'code', size: 'duo' | 'trio' | 'quad') =>
    sequentialPipeline({ domain, size }).agents.slice(1).map((a) => turnMessage(a.role, a.roleDescription));
  assert.deepEqual(turns('math', 'duo'), ["Now it is Solver's turn. Executes the plan and produces the final answer."]);
  assert.deepEqual(turns('math', 'quad'), [
    "Now it is Solver's turn. Executes the plan and produces the final answer.",
    "Now it is Reflector's turn. Reviews the solution and identifies errors or gaps.",
    "Now it is Verifier's turn. Verifies or corrects the solver's answer after reflection.",
  ]);
  assert.deepEqual(turns('code', 'trio'), [
    "Now it is Solver's turn. Implements the plan as Python code.",
    "Now it is Verifier's turn. Verifies and finalizes the code.",
  ]);
  assert.deepEqual(turns('code', 'quad'), [
    "Now it is Solver's turn. Implements the plan as Python code.",
    "Now it is Reflector's turn. Reflects on the code and identifies issues.",
    "Now it is Verifier's turn. Produces the final verified code.",
  ]);
  const names = (size: 'duo' | 'trio' | 'quad') => sequentialPipeline({ domain: 'code', size }).agents.map((a) => a.name);
  assert.deepEqual(names('duo'), ['planner', 'solver']);
  assert.deepEqual(names('quad'), ['planner', 'solver', 'reflector', 'verifier']);
  const shared = sequentialPipeline({ domain: 'math', size: 'quad', policies: 'policy' });
  assert.deepEqual(shared.agents.map((a) => a.policy), ['policy', 'policy', 'policy', 'policy']);
  assert.throws(() => sequentialPipeline({ domain: 'math', size: 'duo', policies: ['a'] }), /expected 2 adapter names/);
  const swapped = withPolicies(shared, { planner: 'base', verifier: 'v2' });
  assert.deepEqual(swapped.agents.map((a) => a.policy), ['base', 'policy', 'policy', 'v2']);
  assert.equal(shared.agents[0]!.policy, 'policy'); // the original is unchanged
  assert.throws(() => withPolicies(shared, { critic: 'x' }), /'critic' is not an agent of workflow 'math-quad'/);
});

test('anonymous Quad (code): same graph, position-indexed generic prompts', async () => {
  const wf = sequentialPipeline({ domain: 'code', size: 'quad', anonymous: true });
  assert.equal(wf.name, 'code-anonymous-quad');
  assert.deepEqual(wf.agents.map((a) => a.roleDescription), [
    'The first agent in the sequential pipeline.',
    'The second agent in the sequential pipeline.',
    'The third agent in the sequential pipeline.',
    'The fourth agent in the sequential pipeline.',
  ]);
  for (const a of wf.agents) assert.doesNotMatch(a.systemPrompt, /Planner|Solver|Reflector|Verifier/);
  const sampler = echoSampler();
  const [ep] = await rollout(wf, [new FakeEnv('q', 'Print 1.')], { sampler, tokenizer: tok, params: PARAMS });
  const last = tok.decode(ep!.actions[3]!.promptTokens);
  assert.ok(
    last.endsWith(
      '<|user|>Print 1.<|end|><|assistant|>agent_1 on q<|end|>' +
        "<|user|>Now it is Agent 2's turn. The second agent in the sequential pipeline.<|end|><|assistant|>agent_2 on q<|end|>" +
        "<|user|>Now it is Agent 3's turn. The third agent in the sequential pipeline.<|end|><|assistant|>agent_3 on q<|end|>" +
        "<|user|>Now it is Agent 4's turn. The fourth agent in the sequential pipeline.<|end|><|assistant|>",
    ),
  );
});

test('many problems in flight: one sampler call per round across all episodes, episodes kept apart', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'quad', policies: 'shared' });
  const envs = ['a', 'b', 'c'].map((id) => new FakeEnv(id, `problem ${id}`, () => ({ teamReward: 0.5, done: true })));
  const sampler = echoSampler();
  const episodes = await rollout(wf, envs, { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => `${r.meta!.problemId}:${r.meta!.agent}`)), [
    ['a:planner', 'b:planner', 'c:planner'],
    ['a:solver', 'b:solver', 'c:solver'],
    ['a:reflector', 'b:reflector', 'c:reflector'],
    ['a:verifier', 'b:verifier', 'c:verifier'],
  ]);
  episodes.forEach((ep, k) => {
    const id = ['a', 'b', 'c'][k]!;
    assert.equal(ep.problemId, id);
    assert.deepEqual(ep.actions.map((a) => a.text), ['planner', 'solver', 'reflector', 'verifier'].map((n) => `${n} on ${id}`));
    assert.ok(tok.decode(ep.actions[3]!.promptTokens).includes(`solver on ${id}`));
    for (const other of ['a', 'b', 'c'].filter((x) => x !== id)) assert.ok(!tok.decode(ep.actions[3]!.promptTokens).includes(` on ${other}`));
  });
});

test('maxInFlight bounds concurrent episodes; later environments start as earlier ones finish', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'duo' });
  const envs = ['a', 'b', 'c', 'd', 'e'].map((id) => new FakeEnv(id, id));
  const sampler = echoSampler();
  const episodes = await rollout(wf, envs, { sampler, tokenizer: tok, params: PARAMS, maxInFlight: 2 });
  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => r.meta!.problemId).join('')), ['ab', 'ab', 'cd', 'cd', 'e', 'e']);
  assert.deepEqual(episodes.map((e) => e.problemId), ['a', 'b', 'c', 'd', 'e']);
});

test('per-agent sampling overrides split a round into one call per parameter set; max_tokens actions keep every token', async () => {
  const wf = { ...sequentialPipeline({ domain: 'math', size: 'duo' }), graph: [] }; // D ≡ 0: both act in round 0
  wf.agents[1]!.sampleParams = { maxNewTokens: 5 };
  const sampler = echoSampler();
  const envs = [new FakeEnv('a', 'x'), new FakeEnv('b', 'y')];
  const [ep] = await rollout(wf, envs, { sampler, tokenizer: tok, params: PARAMS });
  assert.deepEqual(sampler.calls.map((c) => [c.params.maxNewTokens, c.requests.map((r) => `${r.meta!.problemId}:${r.meta!.agent}`)]), [
    [200, ['a:planner', 'b:planner']],
    [5, ['a:solver', 'b:solver']],
  ]);
  assert.equal(sampler.calls[0]!.params.seed, sampler.calls[1]!.params.seed);
  const solver = ep!.actions[1]!;
  assert.equal(solver.stopReason, 'max_tokens');
  assert.deepEqual(solver.actionTokens, tok.encode('solve'));
  assert.equal(solver.text, 'solve');
});

test('rewards are recorded raw: the step’s team reward on its record, each action’s local reward as the environment gave it (0 when it gave none)', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'quad' });
  const env = new FakeEnv('p', 'q', () => ({ teamReward: 1, done: true, perAgentReward: { solver: 0.5 } }));
  const [ep] = await rollout(wf, [env], { sampler: echoSampler(), tokenizer: tok, params: PARAMS });
  assert.deepEqual(ep!.steps.map((s) => s.teamReward), [1]);
  assert.deepEqual(ep!.actions.map((a) => a.localReward), [0, 0.5, 0, 0]);
  // Nothing of the weighting or placement is on the records (test/train/rewards.test.ts places them).
  for (const a of ep!.actions) assert.ok(!('reward' in a));
  assert.ok(!('teamCredit' in ep!.steps[0]!));
});

test('a prompt over maxPromptTokens is an error naming the agent and problem', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'duo' });
  await assert.rejects(
    rollout(wf, [new FakeEnv('long', 'x'.repeat(500))], { sampler: echoSampler(), tokenizer: tok, params: PARAMS, maxPromptTokens: 100 }),
    /prompt of agent 'planner' at step 0 of problem 'long' has \d+ tokens, over maxPromptTokens = 100/,
  );
});

test('Trio with 2 agents per role: names, stages acting in parallel, every later agent sees every earlier one, execution order', async () => {
  const wf = sequentialPipeline({ domain: 'math', size: 'trio', agentsPerRole: 2 });
  const names = ['planner_1', 'planner_2', 'solver_1', 'solver_2', 'verifier_1', 'verifier_2'];
  assert.deepEqual(wf.agents.map((a) => [a.name, a.role, a.policy]), names.map((n) => [n, n[0]!.toUpperCase() + n.slice(1, -2), n]));
  assert.equal(wf.name, 'math-trio-x2');
  // Each stage's agents → each later stage's agents; none inside a stage.
  const edges = new Set(wf.graph.map(([a, b]) => `${a}>${b}`));
  assert.equal(edges.size, 4 + 4 + 4);
  for (const [from, to] of [['planner_1', 'solver_2'], ['planner_2', 'verifier_1'], ['solver_1', 'verifier_2']]) assert.ok(edges.has(`${from}>${to}`), `${from} → ${to}`);
  for (const [from, to] of [['planner_1', 'planner_2'], ['solver_1', 'solver_2'], ['verifier_1', 'verifier_2']]) assert.ok(!edges.has(`${from}>${to}`) && !edges.has(`${to}>${from}`), `${from} and ${to} act in parallel`);
  assert.match(wf.agents[1]!.systemPrompt, /one of 2 agents in this role \(Planner\)/);

  const env = new FakeEnv('p1', 'What is 2+3?', () => ({ teamReward: 1, done: false }));
  const sampler = echoSampler();
  const [ep] = await rollout(wf, [env], { sampler, tokenizer: tok, params: PARAMS, keepMessages: true });
  // Three rounds (one per stage), the two agents of a stage in one sampler call.
  assert.deepEqual(sampler.calls.map((c) => c.requests.map((r) => r.meta!.agent)), [names.slice(0, 2), names.slice(2, 4), names.slice(4)]);
  assert.deepEqual(ep!.actions.map((a) => [a.agent, a.agentIndex, a.step]), names.map((n, k) => [n, k, 0]));
  assert.deepEqual(env.seen[0]!.outputs.map((o) => o.agent), names);

  const observations = (ep!.info as { observations: ChatMessage[][] }).observations;
  const turn = (who: string, description: string): ChatMessage => ({ role: 'user', content: `Now it is ${who}'s turn. ${description}` });
  const PLAN = 'Analyzes the problem and outlines a step-by-step plan.';
  const SOLVE = 'Executes the plan and produces the final answer.';
  const VERIFY = "Verifies or corrects the solver's answer.";
  const said = (name: string): ChatMessage => ({ role: 'assistant', content: `${name} on p1` });
  const head = (k: number): ChatMessage[] => [{ role: 'system', content: wf.agents[k]!.systemPrompt }, { role: 'user', content: 'What is 2+3?' }];
  // Planners see only the problem (neither sees the other); each solver sees both planners;
  // each verifier sees both planners and both solvers, in stage then index order.
  const planners = [said('planner_1'), turn('Planner #2', PLAN), said('planner_2')];
  const solvers = [turn('Solver #1', SOLVE), said('solver_1'), turn('Solver #2', SOLVE), said('solver_2')];
  assert.deepEqual(observations, [
    head(0),
    head(1),
    [...head(2), ...planners, turn('Solver #1', SOLVE)],
    [...head(3), ...planners, turn('Solver #2', SOLVE)],
    [...head(4), ...planners, ...solvers, turn('Verifier #1', VERIFY)],
    [...head(5), ...planners, ...solvers, turn('Verifier #2', VERIFY)],
  ]);
  assert.throws(() => sequentialPipeline({ domain: 'math', size: 'duo', agentsPerRole: 0 }), /agentsPerRole must be a positive integer/);
  // One agent per role is the pipeline as before (same names, the full sequential graph).
  assert.deepEqual(sequentialPipeline({ domain: 'math', size: 'trio', agentsPerRole: 1 }).graph, sequentialPipeline({ domain: 'math', size: 'trio' }).graph);
});
