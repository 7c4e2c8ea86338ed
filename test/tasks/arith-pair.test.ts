// The arith-pair task (src/tasks/arith-pair/): its options, its scripted pretraining episodes (for
// the pair, the same as the MAS-OPD demo's simulator; for SA+MT and the 4-agent system, the real
// environment's feedback and stop rules), its shared tokenizer, and `marft train` on it with the
// teacher it builds (MAS-OPD) and without one (GRPO).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Rng } from '../../src/core/rng.ts';
import { correctReduction, makeProblem } from '../../src/tasks/arith-duo/task.ts';
import { createArithPairTask, pairTaskTokenizer, parseArithPairOptions, taskSystems } from '../../src/tasks/arith-pair/arith-pair-task.ts';
import { scriptedEpisode, scriptedTeacherBatch } from '../../src/tasks/arith-pair/scripted-episodes.ts';
import { reasonerText, toolUserText } from '../../src/tasks/arith-pair/study-task.ts';
import { simulateEpisode } from '../../src/tasks/arith-pair/transcripts.ts';
import { TaskOptionError } from '../../src/tasks/options.ts';
import { assertUserError, runCli } from '../cli/spawn-cli.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-arith-pair-'));
after(() => rmSync(root, { recursive: true, force: true }));
const noise = { wrongOrder: 0.5, verdictRate: 1 };
const [pair, pair4, saSt, saMt] = taskSystems();

test('options: defaults, and every mistake one line naming the key', () => {
  assert.deepEqual(parseArithPairOptions({}), { workflow: 'reasoner-tooluser', agentsPerRole: 1, heldOut: 200, studentSteps: 1600, teacherSteps: 300, baseCache: '' });
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ heldOutt: 3 }, /^task\.options\.heldOutt: unknown option of task 'arith-pair' \(known: workflow, /],
    [{ workflow: 'duo' }, /^task\.options\.workflow: got "duo", expected one of 'reasoner-tooluser', 'sa-st', 'sa-mt'$/],
    [{ workflow: 'sa-st', agentsPerRole: 2 }, /^task\.options\.agentsPerRole: got 2, expected 1 for workflow 'sa-st'/],
    [{ agentsPerRole: 3 }, /^task\.options\.agentsPerRole: got 3, expected an integer in 1\.\.2$/],
    [{ baseSeed: -1 }, /^task\.options\.baseSeed: got -1, expected an integer >= 0$/],
  ];
  for (const [raw, message] of bad) assert.throws(() => parseArithPairOptions(raw), (err: Error) => err instanceof TaskOptionError && message.test(err.message), JSON.stringify(raw));
});

test('scripted episodes of the pair are the demo simulator\'s, turn for turn (inputs, replies, verdicts)', async () => {
  for (let seed = 0; seed < 20; seed++) {
    const p = makeProblem(1 + (seed % 9), seed % 2 ? '+' : '-', 4, '*', 1 + ((seed * 7) % 9));
    const demo = simulateEpisode(pair!, p, new Rng(seed), noise);
    const scripted = await scriptedEpisode(pair!, p, new Rng(seed), noise);
    assert.deepEqual(scripted, demo, `seed ${seed}`);
  }
});

test('scripted episodes: the 4-agent system shows each agent its counterparts and stops when all four agree; SA+MT stops on a kept answer', async () => {
  const p = makeProblem(3, '+', 4, '*', 2);
  let long = await scriptedEpisode(pair4!, p, new Rng(0), noise);
  for (let s = 1; long.length < 2; s++) long = await scriptedEpisode(pair4!, p, new Rng(s), noise);
  assert.equal(long[0]!.inputs.length, 4);
  const later = long[1]!.inputs[0]!.map((m) => m.content).join('\n');
  assert.match(later, /The program from Tool-User 1 in the previous turn:/);
  assert.match(later, /The program from Tool-User 2 in the previous turn:/);
  assert.match(later, /reasoner_2 \(Reasoner\) answered -?\d+/);
  assert.match(long[1]!.verdict!, /tool_user_2 \(Tool-User\): the program printed -?\d+, (in)?consistent with the problem\./);
  for (let s = 0; s < 30; s++) {
    const episode = await scriptedEpisode(pair4!, p, new Rng(s), noise);
    const values = (turn: (typeof episode)[number]) => new Set(turn.given.map((g, k) => (g === (k < 2 ? reasonerText(p, 0) : toolUserText(p, 0)) ? 0 : 1)));
    // Every turn but the last disagrees; the last agrees unless the horizon ended the episode.
    episode.slice(0, -1).forEach((turn) => assert.equal(values(turn).size, 2, `seed ${s}`));
    if (episode.length < 4) assert.equal(values(episode[episode.length - 1]!).size, 1, `seed ${s}`);
  }
  for (let s = 0; s < 30; s++) {
    const episode = await scriptedEpisode(saMt!, p, new Rng(s), noise);
    assert.ok(episode.every((turn) => turn.verdict === null && turn.inputs.length === 1));
    // SA+MT's self-consistency stop: the episode ends on the first turn that repeats the previous answer.
    for (let t = 1; t < episode.length - 1; t++) assert.notEqual(episode[t]!.given[0], episode[t - 1]!.given[0], `seed ${s} turn ${t}`);
    if (episode.length > 1 && episode.length < 4) assert.equal(episode.at(-1)!.given[0], episode.at(-2)!.given[0], `seed ${s}: the last turn repeats`);
  }
  assert.equal((await scriptedEpisode(saSt!, p, new Rng(0), noise)).length, 1);
});

test('the teacher learns correct replies in every seat of the pair and of the 4-agent system', async () => {
  const tokenizer = pairTaskTokenizer();
  const p = makeProblem(9, '-', 5, '*', 4);
  const right = correctReduction(p);
  const batch = await scriptedTeacherBatch([{ workflow: pair!, problem: p }, { workflow: pair4!, problem: p }, { workflow: pair4!, problem: p }], tokenizer, new Rng(3), noise);
  assert.ok(batch.length >= 2 + 4 + 4);
  for (const r of batch) {
    const reply = tokenizer.decode(r.tokens.slice(r.scoreFrom, -1));
    assert.ok(reply === reasonerText(p, right) || reply === toolUserText(p, right), reply);
    assert.match(tokenizer.decode(r.tokens.slice(0, r.scoreFrom)), /in a collaborative mathematical problem-solving system/);
  }
});

test('one tokenizer for every system: exact round trips, fixed phrases as single tokens', () => {
  const tokenizer = pairTaskTokenizer();
  const history = (w: NonNullable<typeof pair>) => [{ t: 0, outputs: w.agents.map((a) => ({ agent: a.name, role: a.role, text: a.role === 'Tool-User' ? toolUserText(makeProblem(3, '+', 4, '*', 2), 0) : reasonerText(makeProblem(3, '+', 4, '*', 2), 1) })), feedback: 'reasoner (Reasoner) answered 11\ntool_user (Tool-User): the program printed 14\nThe answers do not agree.' }];
  for (const w of [pair!, pair4!, saSt!, saMt!]) {
    for (const agent of w.agents) {
      const text = tokenizer.renderChat(w.observe({ agent, t: 1, problem: '3+4*2', visible: [], history: history(w), position: 0, agents: w.agents }), { addGenerationPrompt: true });
      const ids = tokenizer.encode(text);
      assert.equal(tokenizer.decode(ids), text);
      assert.ok(ids.length < text.length / 4, `${w.name} ${agent.name}: ${ids.length} tokens for ${text.length} characters`);
    }
  }
  const task = createArithPairTask({ workflow: 'sa-mt' }).task;
  assert.deepEqual(task.agents, ['reasoner']);
  assert.equal(task.problems.heldOut.length, 200);
  assert.deepEqual(createArithPairTask({ agentsPerRole: 2 }).task.agents, ['reasoner_1', 'reasoner_2', 'tool_user_1', 'tool_user_2']);
});

// Tiny pretraining budgets: what is checked is the wiring, not what the models learn.
const TINY = ['--set', 'task.options.studentSteps=4', '--set', 'task.options.teacherSteps=3', '--set', 'train.steps=1', '--set', 'train.checkpointEvery=1', '--set', 'rollout.batchSize=2', '--set', 'rollout.rolloutsPerPrompt=2', '--set', 'rollout.maxNewTokens=8', '--set', 'eval.problems=2', '--set', 'eval.seeds=1', '--set', 'opd.minibatchSize=2'];

test('marft train: MAS-OPD on arith-pair builds its teacher (teacher.path ""), GRPO does not; the cached base is reused', async () => {
  const config = join(root, 'pair.yaml');
  writeFileSync(config, `task: { name: arith-pair, options: { baseSeed: 0, baseCache: ${join(root, 'cache')} } }\nalgorithm: mas-opd\nactor: { optim: { lr: 1.0e-3 } }\n`);
  const opd = await runCli({ args: ['train', config, '--run-dir', join(root, 'opd'), '--no-progress', ...TINY, '--set', 'rollout.rolloutsPerPrompt=1'] });
  assert.equal(opd.status, 0, opd.stderr);
  assert.match(opd.stderr, /arith-pair: pretraining the students' base \(4 steps/);
  assert.match(opd.stderr, /arith-pair: pretraining the teacher \(3 steps/);
  const metrics = readFileSync(join(root, 'opd', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(metrics.length, 1);
  assert.ok(Number.isFinite(metrics[0].a_opd_reasoner) && Number.isFinite(metrics[0].a_opd_tool_user), JSON.stringify(metrics[0]));
  const grpo = await runCli({ args: ['train', config, '--run-dir', join(root, 'grpo'), '--no-progress', ...TINY, '--set', 'algorithm=grpo'] });
  assert.equal(grpo.status, 0, grpo.stderr);
  assert.doesNotMatch(grpo.stderr, /pretraining/, 'both models come from the cache, and GRPO opens no teacher');
  // A MAS-OPD mistake is refused before any model is built (no pretraining line first).
  assertUserError(await runCli({ args: ['train', config, '--run-dir', join(root, 'opd-g'), ...TINY, '--set', 'task.options.baseCache=', '--set', 'rollout.rolloutsPerPrompt=2'] }), /^marft train: rollout\.rolloutsPerPrompt: mas-opd samples one episode per problem/, 'G > 1');
  // A workflow-task MAS-OPD run without teacher.path is still refused in one line.
  const workflow = join(root, 'workflow.yaml');
  writeFileSync(workflow, 'task: { name: workflow, options: { dataset: gsm8k, workflow: reasoner-tooluser } }\nalgorithm: mas-opd\n');
  assertUserError(await runCli({ args: ['train', workflow, '--run-dir', join(root, 'wf'), '--set', 'train.steps=1'] }), /^marft train: teacher\.path: algorithm mas-opd needs the teacher's Hugging Face model folder/, 'no teacher');
});
