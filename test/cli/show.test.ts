// `marft show`: a run's samples in a terminal, plain and coloured; its errors in one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertUserError, runCli, runInProcess } from './spawn-cli.ts';
import { makeSampleRun } from '../fixtures/sample-run.ts';
import { readStepSamples } from '../../src/runs/samples.ts';
import { episodeText } from '../../src/cli/samples-text.ts';

test('marft show prints the latest step by default, each agent with its text and a strip of one block per token', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-show-'));
  try {
    const run = join(dir, 'run');
    const steps = await makeSampleRun(run, { kind: 'marft', steps: 12, samplesEvery: 5, episodesPerStep: 3 });
    assert.deepEqual(steps, [0, 5, 10]);
    // Through the real binary once (stdout is a pipe: plain text).
    const r = await runCli({ args: ['show', run] });
    assert.equal(r.status, 0, r.stderr);
    const latest = await readStepSamples(run, 10);
    assert.match(r.stdout, /step-10\.jsonl: 3 episodes/);
    assert.equal((r.stdout.match(/^step 10 · episode \d/gm) ?? []).length, 3);
    assert.doesNotMatch(r.stdout, /\x1b\[/, 'no colour on a pipe');
    for (const e of latest)
      for (const a of e.actions) {
        assert.ok(r.stdout.includes(a.text), `the text of ${a.agent}`);
        assert.ok(r.stdout.includes(`advantage per token (${a.tokens.length})`));
      }
    // The strip of the first action: one block per token, the highest advantage a full block.
    const first = latest[0]!.actions[0]!;
    const strip = r.stdout.split('\n').find((l) => /^ {4}[▁▂▃▄▅▆▇█]+$/.test(l))!;
    assert.equal(strip.trim().length, Math.min(first.tokens.length, 80));

    const one = await runInProcess(['show', run, '--step', '5', '--episode', '1', '--agent', 'solver']);
    assert.equal(one.status, 0, one.stderr);
    assert.equal((one.stdout.match(/^step 5 · episode 1/gm) ?? []).length, 1);
    assert.match(one.stdout, /solver \(Solver, policy solver\)/);
    assert.doesNotMatch(one.stdout, /planner \(Planner/);
    const e1 = (await readStepSamples(run, 5))[1]!;
    assert.match(one.stdout, new RegExp(`verdict: ${e1.turns[0]!.verdict}`));

    // A samples file given directly (what marft eval --output writes).
    const file = join(run, 'samples', 'step-0.jsonl');
    const direct = await runInProcess(['show', file, '--episode', '0']);
    assert.equal(direct.status, 0, direct.stderr);
    assert.match(direct.stdout, /^step 0 · episode 0/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in colour every token of the text gets its own background, red below zero and green above', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-show-'));
  try {
    const run = join(dir, 'run');
    await makeSampleRun(run, { kind: 'marft', steps: 1, samplesEvery: 1, episodesPerStep: 1 });
    const [e] = await readStepSamples(run, 0);
    const text = episodeText(e!, { color: true });
    const a = e!.actions[0]!;
    const backgrounds = [...text.matchAll(/\x1b\[48;2;(\d+);(\d+);(\d+)m/g)].map((m) => m.slice(1).map(Number));
    assert.equal(backgrounds.length, e!.actions.reduce((s, x) => s + x.tokens.length, 0));
    // The first action's tokens come first, in order: the largest advantage is the greenest.
    const first = backgrounds.slice(0, a.tokens.length);
    const best = a.advantages!.indexOf(Math.max(...a.advantages!));
    const worst = a.advantages!.indexOf(Math.min(...a.advantages!));
    if (a.advantages![best]! > 0) assert.ok(first[best]![1]! > first[best]![0]!, 'positive: green above red');
    if (a.advantages![worst]! < 0) assert.ok(first[worst]![0]! > first[worst]![1]!, 'negative: red above green');
    // MAS-OPD samples show the teacher gap.
    await makeSampleRun(join(dir, 'opd'), { kind: 'mas-opd', steps: 1, samplesEvery: 1, episodesPerStep: 1 });
    const [o] = await readStepSamples(join(dir, 'opd'), 0);
    assert.match(episodeText(o!, { color: false }), /teacher gap per token/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('marft show errors are one line: no run, no samples yet, a missing step, episode or agent, a newer format', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-show-'));
  try {
    const run = join(dir, 'run');
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    await makeSampleRun(run, { kind: 'marft', steps: 6, samplesEvery: 5, episodesPerStep: 2 });
    const cases: [string[], RegExp][] = [
      [[], /expected exactly one RUN folder/],
      [[join(dir, 'nope')], /no such run folder or samples file/],
      [[empty], /has no samples yet: a run writes RUN\/samples\/step-N\.jsonl every log\.samplesEvery steps/],
      [[run, '--step', '3'], /has no samples for step 3 \(steps with samples: 0, 5\)/],
      [[run, '--step', 'x'], /--step must be a whole number/],
      [[run, '--episode', '9'], /has no episode 9 \(episodes: 0, 1\)/],
      [[run, '--agent', 'critic'], /has no agent 'critic' \(agents: planner, solver\)/],
    ];
    for (const [args, message] of cases) assertUserError(await runInProcess(['show', ...args]), message, args.join(' '));
    const file = join(run, 'samples', 'step-5.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"version":1', '"version":3'));
    assertUserError(await runInProcess(['show', run]), /step-5\.jsonl:1: samples format version 3 is newer than this marft reads/, 'newer version');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
