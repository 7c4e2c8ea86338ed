// The code-pair task (src/tasks/code-pair/): its problems (golden tests that Python itself agrees
// with, wrong-order programs failing every one), its options, its scripted pretraining episodes
// through the real code environment, its tokenizer, the cached judge, and `marft train` on it with
// CURE (the Coder–Tester pair at horizon 1) and with GRPO.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Rng } from '../../src/core/rng.ts';
import { cachedJudge } from '../../src/tasks/code-pair/cached-judge.ts';
import { codePairTokenizer, codeProblemSets, codeTaskSystems, createCodePairTask, parseCodePairOptions } from '../../src/tasks/code-pair/code-pair-task.ts';
import { allExpressions, expressionOf, testerCaseRight, codeProblem, codeSplit, coderText, programSource, rightReduction, testerText, valueAt } from '../../src/tasks/code-pair/code-problems.ts';
import { scriptedCodeEpisode } from '../../src/tasks/code-pair/scripted-episodes.ts';
import { TaskOptionError } from '../../src/tasks/options.ts';
import { verifyCode } from '../../src/verify/code/index.ts';
import { extractPythonCode, extractTestCase } from '../../src/workflow/index.ts';
import { assertUserError, runCli } from '../cli/spawn-cli.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-code-pair-'));
after(() => rmSync(root, { recursive: true, force: true }));
const noise = { wrongOrder: 0.5, verdictRate: 0 };
const [pair, saSt, saMt] = codeTaskSystems();

test('problems: 468 expressions, a fixed split, the statement never states a value', () => {
  assert.equal(allExpressions().length, 468);
  const a = codeSplit(100);
  assert.deepEqual(codeSplit(100), a, 'the split does not depend on anything but heldOut');
  assert.equal(a.heldOut.length, 100);
  assert.equal(a.train.length, 368);
  const held = new Set(a.heldOut.map((e) => codeProblem(e).id));
  assert.ok(a.train.every((e) => !held.has(codeProblem(e).id)));
  const p = codeProblem({ a: 3, op1: '+', b: 4, op2: '*' });
  assert.equal(p.statement, 'Read an integer x from standard input and print the value of 3+4*x.');
  assert.deepEqual(p.tests, { kind: 'stdio', tests: [{ stdin: '2\n', stdout: '11\n' }, { stdin: '5\n', stdout: '23\n' }, { stdin: '7\n', stdout: '31\n' }] });
});

test('the golden tests are Python\'s: the reference passes all, the wrong-order program none (sandbox)', async () => {
  const rng = new Rng(7);
  const sample = rng.shuffle(allExpressions()).slice(0, 6);
  for (const e of sample) {
    const p = codeProblem(e);
    const right = rightReduction(e);
    assert.equal(p.referenceSolution, programSource(e, right));
    const good = await verifyCode({ program: extractPythonCode(coderText(e, right))!, tests: p.tests, timeoutMs: 10_000 });
    assert.equal(good.passed, 3, `${p.id}: ${JSON.stringify(good.results)}`);
    const bad = await verifyCode({ program: extractPythonCode(coderText(e, (1 - right) as 0 | 1))!, tests: p.tests, timeoutMs: 10_000 });
    assert.equal(bad.passed, 0, `${p.id}: the wrong order fails every golden test`);
  }
});

test('the Tester\'s reply is a test case in its prompt\'s format, with the value its order gives', () => {
  const e = { a: 9, op1: '-' as const, b: 2, op2: '*' as const };
  const right = testerText(e, 4, rightReduction(e));
  assert.equal(right, '2*4=8\n9-8=1\n**Test Input:**\n```\n4\n```\n**Test Output:**\n```\n1\n```');
  assert.deepEqual(extractTestCase(right), { input: '4\n', output: '1\n' });
  assert.deepEqual(extractTestCase(testerText(e, 4, 0)), { input: '4\n', output: `${valueAt(e, 4, 0)}\n` });
  assert.equal(valueAt(e, 4, 0), 28);
  // What scripts/code-pair-testers.ts counts: a case right in value, whatever the scratch work says.
  assert.deepEqual(expressionOf('9-2*x'), e);
  assert.equal(testerCaseRight(e, right), true);
  assert.equal(testerCaseRight(e, testerText(e, 4, 0)), false);
  assert.equal(testerCaseRight(e, '7*7=1\n**Test Input:**\n```\n4\n```\n**Test Output:**\n```\n1\n```'), true);
  assert.equal(testerCaseRight(e, '**Test Input:**\n```\n4\n```'), false, 'no output block');
  assert.equal(testerCaseRight(e, '**Test Input:**\n```\nfour\n```\n**Test Output:**\n```\n1\n```'), false, 'not an integer input');
  assert.throws(() => expressionOf('3+4*2'), /not a code-pair problem id/);
});

test('options: defaults, and every mistake one line naming the key', () => {
  assert.deepEqual(parseCodePairOptions({}), { workflow: 'coder-tester', horizon: 4, heldOut: 100, studentSteps: 1600, baseCache: '' });
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ heldOutt: 3 }, /^task\.options\.heldOutt: unknown option of task 'code-pair' \(known: workflow, /],
    [{ workflow: 'reasoner-tooluser' }, /^task\.options\.workflow: got "reasoner-tooluser", expected one of 'coder-tester', 'sa-st', 'sa-mt'$/],
    [{ horizon: 0 }, /^task\.options\.horizon: got 0, expected an integer in 1\.\.4$/],
    [{ heldOut: 468 }, /^task\.options\.heldOut: got 468, expected an integer in 1\.\.400$/],
  ];
  for (const [raw, message] of bad) assert.throws(() => parseCodePairOptions(raw), (err: Error) => err instanceof TaskOptionError && message.test(err.message), JSON.stringify(raw));
});

test('scripted episodes: the pair sees each other\'s reply and the real feedback, and stops when program and case agree; SA+MT stops on a kept program', async () => {
  const e = { a: 5, op1: '-' as const, b: 8, op2: '+' as const };
  let long = await scriptedCodeEpisode(pair!, e, new Rng(0), noise);
  for (let s = 1; long.length < 2; s++) long = await scriptedCodeEpisode(pair!, e, new Rng(s), noise);
  const later = long[1]!.inputs[0]!.map((m) => m.content).join('\n');
  assert.match(later, /The test case from the Tester in the previous turn:\n/);
  assert.match(later, /coder's program on tester's case: on test input "\d\\n", the program printed "-?\d+\\n", while the declared expected output was "-?\d+\\n"\. They disagree\./);
  for (let s = 0; s < 30; s++) {
    const episode = await scriptedCodeEpisode(pair!, e, new Rng(s), noise);
    // Program and case agree exactly when both used the same order (this expression's orders differ at every input).
    const order = (turn: (typeof episode)[number]) => [coderText(e, 0) === turn.given[0] ? 0 : 1, extractTestCase(turn.given[1]!)!.output === `${valueAt(e, Number(extractTestCase(turn.given[1]!)!.input), 0)}\n` ? 0 : 1];
    episode.slice(0, -1).forEach((turn) => assert.notEqual(order(turn)[0], order(turn)[1], `seed ${s}`));
    if (episode.length < 4) assert.equal(order(episode.at(-1)!)[0], order(episode.at(-1)!)[1], `seed ${s}`);
  }
  for (let s = 0; s < 30; s++) {
    const episode = await scriptedCodeEpisode(saMt!, e, new Rng(s), noise);
    for (let t = 1; t < episode.length - 1; t++) assert.notEqual(episode[t]!.given[0], episode[t - 1]!.given[0], `seed ${s} turn ${t}`);
    if (episode.length > 1 && episode.length < 4) assert.equal(episode.at(-1)!.given[0], episode.at(-2)!.given[0], `seed ${s}: the last turn repeats`);
  }
  assert.equal((await scriptedCodeEpisode(saSt!, e, new Rng(0), noise)).length, 1);
});

test('one tokenizer for every system: exact round trips, no unknown characters, fixed phrases as single tokens', async () => {
  const tokenizer = codePairTokenizer();
  const rng = new Rng(5);
  const train = codeSplit(100).train;
  for (const w of [pair!, saSt!, saMt!]) {
    for (let i = 0; i < 10; i++) {
      for (const turn of await scriptedCodeEpisode(w, rng.pick(train), rng, noise)) {
        turn.inputs.forEach((m, k) => {
          const text = tokenizer.renderChat(m, { addGenerationPrompt: true }) + turn.given[k]!;
          const ids = tokenizer.encode(text);
          assert.equal(tokenizer.decode(ids), text);
          assert.ok(!ids.includes(tokenizer.encode('<unk>')[0]!), 'no character outside the alphabet');
          assert.ok(ids.length < text.length / 4, `${w.name}: ${ids.length} tokens for ${text.length} characters`);
        });
      }
    }
  }
  assert.deepEqual(createCodePairTask({ workflow: 'sa-mt' }).task.agents, ['coder']);
  assert.deepEqual(createCodePairTask({ horizon: 1 }).task.workflow.horizon, 1);
  assert.equal(codeProblemSets(100).heldOut.length, 100);
});

test('the cached judge judges each (problem, program) once', async () => {
  let calls = 0;
  const judge = cachedJudge(async () => {
    calls++;
    return { passed: 1, total: 1, results: [{ status: 'passed' }] };
  });
  const [p, q] = codeSplit(100).heldOut.map(codeProblem);
  await Promise.all([judge('print(1)\n', p!, 1000), judge('print(1)\n', p!, 1000), judge('print(1)\n', q!, 1000), judge('print(2)\n', p!, 1000)]);
  assert.equal(calls, 3);
  assert.equal(judge.judged(), 3);
});

// Tiny budgets: what is checked is the wiring (CURE's rewards reach the update), not what is learnt.
const TINY = ['--set', 'task.options.studentSteps=4', '--set', 'train.steps=1', '--set', 'train.checkpointEvery=1', '--set', 'rollout.batchSize=2', '--set', 'rollout.rolloutsPerPrompt=2', '--set', 'rollout.maxNewTokens=8', '--set', 'eval.problems=2', '--set', 'eval.seeds=1'];

test('marft train: CURE on the pair at horizon 1 and GRPO on it at T = 4; the cached base is reused; CURE at T = 4 is refused in one line', async () => {
  const config = join(root, 'code.yaml');
  writeFileSync(config, `task: { name: code-pair, options: { baseSeed: 0, baseCache: ${join(root, 'cache')}, horizon: 1 } }\nalgorithm: cure\nactor: { optim: { lr: 1.0e-3 } }\n`);
  const cure = await runCli({ args: ['train', config, '--run-dir', join(root, 'cure'), '--no-progress', ...TINY] });
  assert.equal(cure.status, 0, cure.stderr);
  assert.match(cure.stderr, /code-pair: pretraining the students' base \(4 steps/);
  const metrics = readFileSync(join(root, 'cure', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(metrics.length, 1);
  const grpo = await runCli({ args: ['train', config, '--run-dir', join(root, 'grpo'), '--no-progress', ...TINY, '--set', 'algorithm=grpo', '--set', 'task.options.horizon=4'] });
  assert.equal(grpo.status, 0, grpo.stderr);
  assert.doesNotMatch(grpo.stderr, /pretraining/, 'the base comes from the cache');
  assertUserError(await runCli({ args: ['train', config, '--run-dir', join(root, 'cure4'), ...TINY, '--set', 'task.options.horizon=4'] }), /^marft train: .*horizon/, 'CURE needs horizon 1');
});
