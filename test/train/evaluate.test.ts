// Held-out evaluation under n decoding seeds (src/train/evaluate.ts) and its per-problem records
// (src/train/eval-records.ts), with scripted scores and a scripted model so that every number is
// worked out by hand: the per-seed means, their mean, pass@k for every k ≤ n; the records hold the
// problem text, each turn's text and the verdict, and `marft show`'s reader reads them back.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import type { SamplingEngine } from '../../src/engine/types.ts';
import type { MathProblem } from '../../src/env/datasets/index.ts';
import { evalRecords, writeEvalRecords } from '../../src/train/eval-records.ts';
import { readSamplesFile } from '../../src/runs/samples.ts';
import { createWorkflowTask, taskCharTokenizer, type WorkflowTask } from '../../src/tasks/index.ts';
import { evalSeed, evaluatePolicies } from '../../src/train/evaluate.ts';
import type { EvalRequest, Task } from '../../src/train/task.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';
import { ScriptedSampler } from '../../src/workflow/index.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-evaluate-'));
after(() => rmSync(root, { recursive: true, force: true }));

const close = (actual: readonly number[], expected: readonly number[], what: string): void => {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((x, i) => assert.ok(Math.abs(x - expected[i]!) < 1e-12, `${what}[${i}]: ${x} vs ${expected[i]}`));
};

/** scores[seed][problem] handed out by a task that plays nothing. */
function scriptedTask(scores: number[][], requests: EvalRequest[] = []): Task {
  return {
    agents: ['a'],
    rollout: () => Promise.reject(new Error('not used')),
    async evaluate(_engine, req) {
      requests.push(req);
      const i = scores.findIndex((_, s) => evalSeed(s) === req.seed);
      assert.ok(i >= 0, `seed ${req.seed} is one of the evaluation seeds`);
      return scores[i]!.map((score, j): Episode => ({ problemId: `p${j}`, actions: [], steps: [], outcome: score, info: {} }));
    },
  };
}

const engine = {} as SamplingEngine;

test('n = 4 seeds × 3 problems: per-seed means, their mean and pass@1..4 as worked out by hand', async () => {
  // problem:   p0   p1   p2
  const scores = [
    [1, 0, 0], // seed 0: mean 1/3
    [1, 1, 0], // seed 1: mean 2/3
    [0, 0, 0], // seed 2: mean 0
    [1, 0, 0.5], // seed 3: mean 1/2 (0.5 is a partial score: not a solution)
  ];
  const requests: EvalRequest[] = [];
  const config = parseConfig({ task: { name: 'bandit' }, eval: { seeds: 4, problems: 3 }, rollout: { maxNewTokens: 7 } });
  const r = await evaluatePolicies(engine, scriptedTask(scores, requests), config, { a: 'policy' });
  close(r.perSeed, [1 / 3, 2 / 3, 0, 1 / 2], 'perSeed');
  // (1/3 + 2/3 + 0 + 1/2) / 4 = 3/8
  assert.ok(Math.abs(r.score - 3 / 8) < 1e-15, `score ${r.score}`);
  assert.equal(r.problems, 3);
  assert.deepEqual(r.scores, scores);
  assert.deepEqual(r.problemIds, ['p0', 'p1', 'p2']);
  // Correct samples out of n = 4: p0 c = 3, p1 c = 1, p2 c = 0.
  // pass@1 = c/n:                    (3/4 + 1/4 + 0) / 3          = 1/3
  // pass@2 = 1 − C(n−c,2)/C(4,2):    p0 1 − 0/6 = 1, p1 1 − 3/6 = 1/2      → (1 + 1/2) / 3   = 1/2
  // pass@3 = 1 − C(n−c,3)/C(4,3):    p0 1,           p1 1 − 1/4 = 3/4      → (1 + 3/4) / 3   = 7/12
  // pass@4:                          p0 1,           p1 1                 → 2/3
  close(r.passAtK, [1 / 3, 1 / 2, 7 / 12, 2 / 3], 'passAtK');
  assert.deepEqual(r.seeds, [0, 1, 2, 3].map(evalSeed));
  assert.deepEqual(requests.map((q) => q.seed), r.seeds, 'one evaluate call per decoding seed, in order');
  for (const q of requests) {
    assert.deepEqual(q.sampling, { temperature: 0.6, topP: 1, topK: 0, maxNewTokens: 7 });
    assert.equal(q.problems, 3);
    assert.deepEqual(q.policies, { a: 'policy' });
  }
  assert.equal(r.episodes, undefined, 'episodes are kept only when asked for');
});

test('the protocol named in the configuration is the decoding every seed is asked for', async () => {
  const requests: EvalRequest[] = [];
  const config = parseConfig({ task: { name: 'bandit' }, eval: { protocol: 'mas-opd' } });
  const r = await evaluatePolicies(engine, scriptedTask(Array.from({ length: 5 }, () => [1]), requests), config, {});
  assert.equal(requests.length, 5, 'mas-opd: 5 decoding seeds by default');
  for (const q of requests) assert.deepEqual([q.sampling.temperature, q.sampling.topP, q.sampling.topK], [0.6, 0.95, 20]);
  assert.deepEqual([r.protocol, r.score, r.passAtK], ['mas-opd', 1, [1, 1, 1, 1, 1]]);
});

test('a task that scores other problems under another seed is refused: pass@k would count unrelated samples', async () => {
  const task = scriptedTask([[1, 0], [1, 0]]);
  const shuffled: Task = { ...task, evaluate: async (e, req) => (await task.evaluate(e, req)).map((ep, j) => (req.seed === evalSeed(1) ? { ...ep, problemId: `q${j}` } : ep)) };
  await assert.rejects(evaluatePolicies(engine, shuffled, parseConfig({ task: { name: 'bandit' }, eval: { seeds: 2 } }), {}), /other problems under decoding seed 1 than under seed 0/);
});

test('records of a scripted SA+MT team on GSM8K: the question, both turns\' text, the verdict, per-seed scores and pass@k', async () => {
  const tok = taskCharTokenizer();
  let task!: WorkflowTask;
  // Turn 0 always answers wrong; turn 1 answers right or wrong by problem and seed:
  //   problem 0: seeds 0 and 2 right, seed 1 wrong; problem 1: wrong under every seed.
  const right = [[true, false, true], [false, false, false]];
  const firstTurns = new Map<string, number>();
  const sampler = new ScriptedSampler(tok, (input) => {
    const { problemId, t } = input.meta!;
    if (t === 0) firstTurns.set(problemId, (firstTurns.get(problemId) ?? 0) + 1);
    const seed = firstTurns.get(problemId)! - 1; // the seeds run one after another
    const index = task.problems.heldOut.findIndex((p) => p.id === problemId);
    const ref = Number((task.problems.heldOut[index] as MathProblem).answer.replace(/,/g, ''));
    if (t === 0) return `First try.\n#### ${ref + 1}`;
    return right[index]![seed] ? `Checked again.\n#### ${ref}` : `Still sure.\n#### ${ref + 2}`;
  });
  task = createWorkflowTask({ dataset: 'gsm8k', workflow: 'sa-mt', horizon: 2 }, { tokenizer: tok, sampler: () => sampler });
  const fakeEngine = { info: { vocabSize: tok.vocabSize } } as unknown as SamplingEngine;
  const config = parseConfig({ task: { name: 'workflow' }, eval: { seeds: 3, problems: 2 }, rollout: { maxNewTokens: 200 } });
  const r = await evaluatePolicies(fakeEngine, task, config, { reasoner: 'policy' }, { keepEpisodes: true });
  // Per seed: (1 + 0)/2, (0 + 0)/2, (1 + 0)/2.
  close(r.perSeed, [0.5, 0, 0.5], 'perSeed');
  assert.ok(Math.abs(r.score - 1 / 3) < 1e-15);
  // p0: c = 2 of 3 → pass@1 2/3, pass@2 1 − C(1,2)/C(3,2) = 1, pass@3 1; p1: c = 0 → 0. Means over the two problems:
  close(r.passAtK, [1 / 3, 1 / 2, 1 / 2], 'passAtK');

  const records = evalRecords(r, task, { name: 'step 7', step: 7, checkpoint: '/ckpt' });
  assert.equal(records.length, 2);
  const [p0, p1] = records;
  const heldOut = task.problems.heldOut as MathProblem[];
  assert.deepEqual(p0!.problem, { index: 0, id: heldOut[0]!.id, text: heldOut[0]!.question });
  assert.deepEqual([p0!.scores, p0!.correct, p1!.scores, p1!.correct], [[1, 0, 1], [true, false, true], [0, 0, 0], [false, false, false]]);
  close(p0!.passAtK, [2 / 3, 1, 1], 'p0 passAtK');
  close(p1!.passAtK, [0, 0, 0], 'p1 passAtK');
  assert.deepEqual([p0!.step, p0!.system, p0!.checkpoint, p0!.protocol, p0!.seeds], [7, 'step 7', '/ckpt', 'custom', r.seeds]);
  // The record's numbers are the summary's: per-seed means and pass@k recomputed from the records alone.
  close([0, 1, 2].map((s) => records.reduce((a, rec) => a + rec.scores[s]!, 0) / records.length), r.perSeed, 'perSeed from the records');

  const file = join(root, 'eval.jsonl');
  await writeEvalRecords(file, records);
  assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 2, 'one line per problem');
  const episodes = await readSamplesFile(file);
  assert.equal(episodes.length, 6, 'the reader of marft show sees 2 problems × 3 seeds');
  const ref0 = Number(heldOut[0]!.answer.replace(/,/g, ''));
  for (const [k, e] of episodes.entries()) {
    const [problem, seed] = [Math.floor(k / 3), k % 3];
    assert.deepEqual([e.step, e.episode, e.problem, e.group, e.prompt], [7, k, heldOut[problem]!.id, `problem-${problem}`, heldOut[problem]!.question]);
    assert.deepEqual(e.info.evalSeed, seed);
    assert.deepEqual(e.actions.map((a) => [a.agent, a.role, a.t, a.policy]), [['reasoner', 'Reasoner', 0, 'policy'], ['reasoner', 'Reasoner', 1, 'policy']]);
    assert.equal(e.turns.length, 2);
    const solved = right[problem]![seed]!;
    assert.equal(e.outcome, solved ? 1 : 0);
    assert.deepEqual(e.turns.map((t) => t.verdict), [null, solved ? 'correct' : 'wrong (score 0)']);
    for (const a of e.actions) assert.equal(a.pieces.join(''), tok.decode(a.tokens), 'pieces join to the decoded tokens');
    if (problem === 0) {
      assert.equal(e.actions[0]!.text, `First try.\n#### ${ref0 + 1}`);
      assert.equal(e.actions[1]!.text, solved ? `Checked again.\n#### ${ref0}` : `Still sure.\n#### ${ref0 + 2}`);
    }
  }
});
