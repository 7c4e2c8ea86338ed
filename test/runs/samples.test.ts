// The samples format: write, read back, bounds, a cut last line, a newer version, token pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SamplesFormatError,
  type SampleRecord,
  parseSamples,
  readSamplesFile,
  readStepSamples,
  sampleSteps,
  stepSamplesFile,
  tokenPieces,
  writeSamplesFile,
  writeStepSamples,
} from '../../src/runs/samples.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';

function record(problem: string, advantages: number[] | null = [0.5, -0.25, Number.NaN]): SampleRecord {
  return {
    problem,
    prompt: `solve ${problem}`,
    group: `g-${problem}`,
    outcome: 1,
    turns: [{ t: 0, teamReward: 1, done: true, feedback: null, verdict: 'RIGHT' }],
    actions: [
      {
        agent: 'planner',
        role: 'Planner',
        t: 0,
        policy: 'planner',
        messages: [{ role: 'user', content: `solve ${problem}` }],
        text: 'a+b',
        tokens: [10, 11, 12],
        pieces: ['a', '+', 'b'],
        logprobs: [-0.1, Number.NEGATIVE_INFINITY, -2],
        reward: 1,
        value: 0.25,
        advantages,
        teacherGap: null,
        ratio: [1, 1.5, 0.5],
      },
    ],
    info: { answer: '3' },
  };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'marft-samples-'));

test('a step file keeps the first K episodes, numbered in order, and reads back exactly (non-finite numbers included)', async () => {
  const run = tmp();
  try {
    const file = await writeStepSamples(run, 7, ['p0', 'p1', 'p2', 'p3'].map((p) => record(p)), 2);
    assert.equal(file, stepSamplesFile(run, 7));
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 3, 'two lines and the final newline');
    const back = await readStepSamples(run, 7);
    assert.deepEqual(back.map((e) => [e.step, e.episode, e.problem]), [[7, 0, 'p0'], [7, 1, 'p1']]);
    const a = back[0]!.actions[0]!;
    assert.equal(back[0]!.format, 'marft-samples');
    assert.equal(back[0]!.version, 1);
    assert.deepEqual(a.logprobs, [-0.1, Number.NEGATIVE_INFINITY, -2]);
    assert.ok(Number.isNaN(a.advantages![2]!));
    assert.deepEqual(a.advantages!.slice(0, 2), [0.5, -0.25]);
    assert.equal(a.teacherGap, null);
    assert.deepEqual(back[0]!.turns, record('p0').turns);
    assert.deepEqual(back[0]!.info, { answer: '3' });
    // A second write of the same step (a resumed run) replaces the file; no temporary is left.
    await writeStepSamples(run, 7, [record('q')], 5);
    assert.deepEqual((await readStepSamples(run, 7)).map((e) => e.problem), ['q']);
    await writeStepSamples(run, 12, [record('r')], 1);
    await writeStepSamples(run, 3, [record('s')], 0);
    assert.deepEqual(await sampleSteps(run), [3, 7, 12]);
    assert.deepEqual(readdirSync(join(run, 'samples')).sort(), ['step-12.jsonl', 'step-3.jsonl', 'step-7.jsonl']);
    assert.deepEqual(await readStepSamples(run, 3), []);
    await assert.rejects(writeStepSamples(run, 1, [], -1), /whole number/);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('an evaluation file holds every record given, with its step or null', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'eval.jsonl');
    await writeSamplesFile(file, null, [record('a'), record('b'), record('c')]);
    const back = await readSamplesFile(file);
    assert.deepEqual(back.map((e) => [e.step, e.episode]), [[null, 0], [null, 1], [null, 2]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cut last line is dropped; a damaged line before it, or a newer version, is refused in one line', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'eval.jsonl');
    await writeSamplesFile(file, 1, [record('a'), record('b')]);
    const whole = readFileSync(file, 'utf8');
    writeFileSync(file, whole + whole.slice(0, 40));
    assert.equal((await readSamplesFile(file)).length, 2);
    writeFileSync(file, whole.slice(0, 40) + '\n' + whole);
    await assert.rejects(readSamplesFile(file), (e: Error) => e instanceof SamplesFormatError && /eval\.jsonl:1: not a JSON line/.test(e.message));
    const newer = JSON.stringify({ ...JSON.parse(whole.split('\n')[0]!), version: 2 });
    writeFileSync(file, whole);
    appendFileSync(file, newer + '\n');
    await assert.rejects(readSamplesFile(file), (e: Error) => e instanceof SamplesFormatError && /:3: samples format version 2 is newer than this marft reads \(up to 1\)/.test(e.message) && !e.message.includes('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a line whose per-token lists do not match its tokens is refused, naming the key', () => {
  const line = JSON.stringify({ format: 'marft-samples', version: 1, step: 0, episode: 0, problem: 'p', prompt: '', group: null, outcome: 0, turns: [], actions: [{ ...record('p').actions[0], logprobs: [-1, -1, -1], advantages: [1] }], info: {} });
  assert.throws(() => parseSamples(line + '\n', 'f'), /f:1: actions\[0\]\.advantages has 1 entries for 3 tokens/);
  assert.throws(() => parseSamples('{"format":"other"}\n', 'f'), /not a marft samples line/);
});

test('tokenPieces joins back to the decoded text, for characters and for byte-level tokens splitting a character', () => {
  const char = new CharTokenizer();
  const ids = char.encode('x = 12\n');
  const pieces = tokenPieces(char, ids);
  assert.deepEqual(pieces, ['x', ' ', '=', ' ', '1', '2', '\n']);
  // A byte-level tokenizer: one id per UTF-8 byte, decoded as a whole (an incomplete character decodes to U+FFFD).
  const bytes = { decode: (xs: number[]) => new TextDecoder().decode(Uint8Array.from(xs)) };
  const text = 'é → ok ' + 'ab'.repeat(70) + ' ∑ end';
  const byteIds = [...new TextEncoder().encode(text)];
  const bytePieces = tokenPieces(bytes, byteIds);
  assert.equal(bytePieces.length, byteIds.length);
  assert.equal(bytePieces.join(''), text);
  assert.deepEqual(bytePieces.slice(0, 3), ['', 'é', ' ']);
  assert.ok(!bytePieces.join('').includes('\uFFFD'));
  // A tokenizer that drops the first token's leading space (SentencePiece-like) keeps it past a window boundary.
  const words = ['▁a', '▁b'];
  const sp = { decode: (xs: number[]) => xs.map((x) => words[x]!).join('').replace(/▁/g, ' ').replace(/^ /, '') };
  const spIds = Array.from({ length: 150 }, (_, i) => i % 2);
  const spPieces = tokenPieces(sp, spIds);
  assert.equal(spPieces.join(''), sp.decode(spIds));
  assert.deepEqual(spPieces.slice(0, 2), ['a', ' b']);
  assert.deepEqual(spPieces.slice(63, 67), [' b', ' a', ' b', ' a']);
});
