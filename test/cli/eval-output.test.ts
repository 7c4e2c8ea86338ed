// `marft eval --output FILE` through the CLI on the coordination game's lookup-table engine (seconds):
// one line per problem and system, and every number of the summary line recomputed from the file
// alone (per-seed means from the per-problem scores, pass@k from each problem's correct samples);
// `marft show FILE` prints the episodes; a file that cannot be written is one line before anything runs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { EvalProblemRecord } from '../../src/train/eval-records.ts';
import { meanPassAtK } from '../../src/core/pass-at-k.ts';
import { assertUserError, runAll, runCli } from './spawn-cli.ts';

const CONFIG = fileURLToPath(new URL('../../examples/coordination-tabular.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'marft-eval-output-'));
const run = join(root, 'run');
const file = join(root, 'eval.jsonl');
after(() => rmSync(root, { recursive: true, force: true }));

const SEEDS = 3;
let summary: Record<string, unknown>;
let stdout: string;

before(async () => {
  const t = await runCli({ args: ['train', CONFIG, '--run-dir', run, '--no-progress', '--set', 'train.steps=6', '--set', 'train.checkpointEvery=3'] });
  assert.equal(t.status, 0, t.stderr);
  const e = await runCli({ args: ['eval', CONFIG, '--checkpoint', run, '--base', '--output', file, '--set', `eval.seeds=${SEEDS}`] });
  assert.equal(e.status, 0, e.stderr);
  stdout = e.stdout;
  summary = JSON.parse(e.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
});

const records = (): EvalProblemRecord[] => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EvalProblemRecord);

test('the summary line names the step, the protocol and the decoding, and gives pass@k for k = 1..n', () => {
  assert.deepEqual(Object.keys(summary), ['score', 'perSeed', 'passAtK', 'problems', 'protocol', 'sampling', 'step', 'checkpoint', 'base']);
  assert.equal(summary.step, 6);
  assert.equal(summary.checkpoint, join(run, 'checkpoints', 'step-000006'));
  assert.deepEqual([summary.protocol, summary.sampling], ['custom', { temperature: 0.6, topP: 1, topK: 0, maxNewTokens: 1 }]);
  assert.equal((summary.passAtK as number[]).length, SEEDS);
  assert.match(stdout, /^system +score +pass@1 +pass@3 +per seed$/m);
  assert.match(stdout, /^untrained +\d\.\d{4} +\d\.\d{4} +\d\.\d{4} +(\d\.\d{3} ?){3}$/m);
  assert.match(stdout, /^step 6 +\d\.\d{4} /m);
});

test('one line per problem and system; the summary\'s numbers recomputed from the file alone', () => {
  const all = records();
  const problems = summary.problems as number;
  assert.equal(problems, 64, 'the coordination game evaluates every secret 16 times');
  assert.equal(all.length, 2 * problems);
  for (const [name, step] of [['untrained', null], ['step 6', 6]] as const) {
    const mine = all.filter((r) => r.system === name);
    assert.equal(mine.length, problems, name);
    assert.deepEqual(mine.map((r) => r.problem.index), Array.from({ length: problems }, (_, i) => i));
    for (const r of mine) {
      assert.equal(r.step, step);
      assert.equal(r.episodes.length, SEEDS);
      assert.deepEqual(r.scores, r.episodes.map((e) => e.outcome), 'each seed\'s score is its episode\'s outcome');
      assert.deepEqual(r.correct, r.scores.map((s) => s >= 1));
    }
    const perSeed: number[] = Array.from({ length: SEEDS }, (_, s) => mine.reduce((a: number, r) => a + r.scores[s]!, 0) / problems);
    const score = perSeed.reduce((a, x) => a + x, 0) / SEEDS;
    const counts = mine.map((r) => ({ n: SEEDS, c: r.correct.filter(Boolean).length }));
    const passAtK = [1, 2, 3].map((k) => meanPassAtK(counts, k));
    if (name === 'step 6') {
      assert.deepEqual(perSeed, summary.perSeed);
      assert.equal(score, summary.score);
      assert.deepEqual(passAtK, summary.passAtK);
    } else assert.equal(score, summary.base);
  }
});

test('marft show reads the file: every episode, with each agent\'s text and the verdict', async () => {
  const shown = await runCli({ args: ['show', file] });
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${2 * 64 * SEEDS} episodes$`, 'm'));
  const one = await runCli({ args: ['show', file, '--episode', '4'] });
  assert.equal(one.status, 0, one.stderr);
  const record = records()[1]!; // episode 4 = problem 1 (of the first system), seed 1
  const episode = record.episodes[1]! as { actions: { agent: string; text: string }[] };
  assert.match(one.stdout, new RegExp(`problem ${record.problem.id} · group problem-1`));
  for (const a of episode.actions) assert.match(one.stdout, new RegExp(`${a.agent} \\(policy base\\)[^\\n]*\\n +${a.text}\\n`));
  assert.match(one.stdout, new RegExp(`verdict: ${record.correct[1] ? 'correct' : 'wrong \\(score 0\\)'}`));
});

test('an --output that cannot be written is one line, before anything is evaluated', async () => {
  const [missing, folder, empty] = await runAll([join(root, 'nowhere', 'x.jsonl'), root, ''].map((out) => ({ args: ['eval', CONFIG, '--base', `--output=${out}`] })), 3);
  assertUserError(missing!, /^marft eval: --output .*nowhere\/x\.jsonl: no such folder .*nowhere$/, 'missing folder');
  assertUserError(folder!, /^marft eval: --output .*: is a folder, not a file$/, 'a folder');
  assertUserError(empty!, /^marft eval: --output needs a file, got an empty value$/, 'empty');
});

test('with one decoding seed the table has one pass@ column (pass@1 is not printed twice)', async () => {
  const e = await runCli({ args: ['eval', CONFIG, '--checkpoint', run, '--set', 'eval.seeds=1'] });
  assert.equal(e.status, 0, e.stderr);
  assert.match(e.stdout, /^system +score +pass@1 +per seed$/m);
  assert.match(e.stdout, /^step 6 +\d\.\d{4} +\d\.\d{4} +\d\.\d{3}$/m);
});
