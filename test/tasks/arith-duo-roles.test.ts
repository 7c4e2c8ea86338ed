// The arith-duo task's `roles` option (src/tasks/arith-duo/arith-task.ts, duo-prompts.ts): the
// spec's anonymous variant keeps the Planner → Solver graph and shows position-indexed labels
// instead of the role names, in the agents' prompts and in the transcripts the base is pretrained
// on alike; it is a base of its own (its own cache name), while the named base keeps the name the
// studies cached before the option existed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arithDuo, cachedBaseName, DEFAULT_ARITH_OPTIONS } from '../../src/tasks/arith-duo/arith-task.ts';
import { transcriptBatch } from '../../src/tasks/arith-duo/corpus.ts';
import { ANONYMOUS_ROLES, NAMED_ROLES } from '../../src/tasks/arith-duo/duo-prompts.ts';
import { splitProblems } from '../../src/tasks/arith-duo/task.ts';
import { demoTokenizer } from '../../src/tasks/arith-duo/vocab.ts';
import { Rng } from '../../src/core/rng.ts';

const tokenizer = demoTokenizer();
const text = (tokens: number[]) => tokenizer.decode(tokens);

test('anonymous roles: the agents are prompted with a1 and a2, never with a role name; named with Planner and Solver', async () => {
  for (const roles of ['named', 'anonymous'] as const) {
    const bundle = arithDuo({ heldOut: 100, pretrainSteps: 1, roles });
    const engine = await bundle.buildEngine!(0);
    const episodes = await bundle.task.evaluate(engine, { problems: 3, policies: {}, sampling: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 16 }, seed: 1 });
    await engine.dispose();
    const labels = roles === 'anonymous' ? ANONYMOUS_ROLES : NAMED_ROLES;
    const other = roles === 'anonymous' ? NAMED_ROLES : ANONYMOUS_ROLES;
    assert.equal(episodes.length, 3);
    for (const e of episodes) {
      const [plan, solve] = e.actions;
      assert.deepEqual(e.actions.map((a) => a.agent), ['planner', 'solver'], 'the agents keep their names');
      const planPrompt = text(plan!.promptTokens);
      const solvePrompt = text(solve!.promptTokens);
      assert.equal(planPrompt, `<|system|>${labels.planner}<|end|><|user|>${e.problemId}<|end|><|assistant|>`, `${roles}: the planner's prompt`);
      assert.equal(solvePrompt, `<|system|>${labels.solver}<|end|><|user|>${e.problemId}<|end|><|assistant|>${plan!.text}<|end|><|user|>${labels.solver}<|end|><|assistant|>`, `${roles}: the solver's prompt`);
      for (const s of [planPrompt, solvePrompt]) assert.ok(!s.includes(`|>${other.planner}<`) && !s.includes(`|>${other.solver}<`), `${roles}: no label of the other set in ${JSON.stringify(s)}`);
    }
  }
});

test('anonymous roles: the pretraining transcripts carry the same labels as the prompts', () => {
  const problems = splitProblems(100).train.slice(0, 4);
  const named = transcriptBatch(tokenizer, problems, new Rng(3));
  const anonymous = transcriptBatch(tokenizer, problems, new Rng(3), undefined, ANONYMOUS_ROLES);
  assert.equal(anonymous.length, named.length);
  for (let k = 0; k < named.length; k++) {
    const n = named[k]!;
    const a = anonymous[k]!;
    const label = k % 2 === 0 ? 'planner' : 'solver';
    assert.ok(text(a.tokens).startsWith(`<|system|>${ANONYMOUS_ROLES[label]}<|end|>`), text(a.tokens));
    assert.ok(text(n.tokens).startsWith(`<|system|>${NAMED_ROLES[label]}<|end|>`), text(n.tokens));
    assert.ok(!text(a.tokens).includes(NAMED_ROLES[label]));
    // The replies (the scored part) are the same teacher's, token for token: only the prompt differs.
    assert.deepEqual(a.tokens.slice(a.scoreFrom), n.tokens.slice(n.scoreFrom));
  }
});

test('roles: the anonymous base has its own cache name; the named one keeps the name it had before the option', () => {
  const named = cachedBaseName(DEFAULT_ARITH_OPTIONS, 0);
  // The name the CPU study's base was cached under before `roles` existed (the hash of the same shaping).
  assert.equal(named, 'arith-duo-edf3626ca1a9-seed0');
  assert.notEqual(cachedBaseName({ ...DEFAULT_ARITH_OPTIONS, roles: 'anonymous' }, 0), named);
  assert.equal(cachedBaseName({ ...DEFAULT_ARITH_OPTIONS, roles: 'named' }, 0), named);
});

test('a bad roles value is one line naming the option and its choices', () => {
  assert.throws(() => arithDuo({ roles: 'anon' }), /^Error: task\.options\.roles: got "anon", expected 'named' or 'anonymous'$/);
});
