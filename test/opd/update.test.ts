// The update through the engine interface: each role's gradient reaches only its own adapter; a
// teacher with another tokenizer is refused; one whole training step runs on the lookup-table
// engine and reports the per-role metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MathEnv } from '../../src/env/math-env.ts';
import { mathAttributor } from '../../src/opd/math-attributor.ts';
import { updatePolicies, type OpdResponse, type OpdStepContext } from '../../src/opd/opd-step.ts';
import { trainOpd } from '../../src/opd/opd-train.ts';
import { opdAdvantages } from '../../src/opd/advantages.ts';
import { DEFAULT_ROLE_CONDITIONS } from '../../src/opd/role-conditions.ts';
import { PAPER_OPD_SETTINGS, type OpdSettings } from '../../src/opd/settings.ts';
import { assertSameTokenizer } from '../../src/opd/tokenizer-match.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { reasonerToolUser } from '../../src/workflow/index.ts';
import type { RunOutcome } from '../../src/sandbox/index.ts';

const settings: OpdSettings = { ...PAPER_OPD_SETTINGS, optim: { ...PAPER_OPD_SETTINGS.optim, lr: 0.1 }, maxNewTokens: 6, steps: 1, batchSize: 2, minibatchSize: 1 };

function response(role: string, policy: string, episode: number): OpdResponse {
  const behaviour = Float32Array.from([-2, -2]);
  return {
    episode, t: 0, agent: role.toLowerCase(), role, policy, promptTokens: [9, 10, 11], actionTokens: [12, 13], behaviour,
    teacherPrompt: [9], contrastPrompt: null, advantages: opdAdvantages([-1, -3], null, behaviour, 0),
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
  const ctx = { student: engine, settings } as unknown as OpdStepContext;
  const only = [response('Reasoner', 'opd-reasoner', 0)];
  await updatePolicies([only], ctx);
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
  const result = await trainOpd({
    student, teacher, tokenizer, seed: 3, settings,
    task: {
      workflow: reasonerToolUser({ horizon: 2 }),
      trainEnvs: (count) => Array.from({ length: count }, (_, i) => new MathEnv({ domain: 'math', id: `p${i}`, dataset: 'test', question: '1+2', answer: '3', meta: {} }, { runProgram })),
      attribute: mathAttributor,
    },
    conditions: DEFAULT_ROLE_CONDITIONS,
  });
  assert.deepEqual(result.adapters, { Reasoner: 'opd-reasoner', 'Tool-User': 'opd-tool-user' });
  const m = result.metrics[0]!;
  for (const key of ['a_opd_reasoner', 'a_role_tool_user', 'teacher_logprob_reasoner', 'student_logprob_tool_user', 'loss', 'grad_norm', 'importance_ratio']) {
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

test('minibatches split by episode: a step of 5 episodes in minibatches of 2 gives 3, each episode whole', async () => {
  const { minibatchesByEpisode } = await import('../../src/opd/opd-step.ts');
  const responses = [0, 0, 1, 2, 2, 3, 4].map((e, k) => response(k % 2 ? 'Reasoner' : 'Tool-User', 'p', e));
  const mbs = minibatchesByEpisode(responses, 5, 2, 7);
  assert.equal(mbs.length, 3);
  assert.deepEqual(mbs.flat().sort((a, b) => responses.indexOf(a) - responses.indexOf(b)), responses);
  for (const e of [0, 2]) assert.equal(mbs.filter((mb) => mb.some((r) => r.episode === e)).length, 1, `episode ${e} is in one minibatch`);
  assert.deepEqual(minibatchesByEpisode(responses, 5, 8, 7), [responses]);
});
