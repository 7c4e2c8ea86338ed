// OUT/results.json (src/experiments/results-json.ts), the learning-curve charts (curves.ts) and the
// progress line (progress.ts) on hand-made results, every number worked out by hand.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Experiment } from '../../src/experiments/experiment-file.ts';
import { buildResultsJson } from '../../src/experiments/results-json.ts';
import { curveChart, curveFile, writeCurves } from '../../src/experiments/curves.ts';
import { ExperimentProgress, estimateLeft, formatDuration } from '../../src/experiments/progress.ts';
import type { ExperimentResult } from '../../src/experiments/results.ts';
import { resultKey } from '../../src/experiments/results.ts';
import { encodeMetrics, type StepMetrics } from '../../src/runs/metrics-log.ts';

const root = mkdtempSync(join(tmpdir(), 'marft-results-json-'));
after(() => rmSync(root, { recursive: true, force: true }));

const exp: Experiment = {
  name: 'hand',
  file: 'hand.yaml',
  seeds: [0, 1, 2],
  set: {},
  rows: [
    { name: 'base', config: 'c.yaml', set: {}, base: true, seeds: [0] },
    { name: 'trained', config: 'c.yaml', set: {}, base: false, seeds: [0, 1, 2] },
  ],
  columns: [{ name: 'X', set: {} }, { name: 'Y', set: {} }],
};

const result = (row: string, seed: number, column: string, perSeed: number[], passAtK: number[] | undefined, step: number | null): ExperimentResult => ({
  row, seed, column, score: perSeed.reduce((a, x) => a + x, 0) / perSeed.length, perSeed, ...(passAtK ? { passAtK } : {}), problems: 10, step, checkpoint: step === null ? null : `/c/${seed}`,
});

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

test('results.json: per method and benchmark the mean and sample std over runs, the run scores in seed order, pass@k aggregated the same way', () => {
  const results = [
    // Out of seed order, and seed 1's X line twice (the first is kept, as in the table).
    result('trained', 2, 'X', [0.9, 0.9], [0.9, 1], 4),
    result('trained', 0, 'X', [0.5, 0.7], [0.6, 0.8], 4),
    result('trained', 1, 'X', [0.2, 0.4], [0.3, 0.5], 4),
    result('trained', 1, 'X', [1, 1], [1, 1], 4),
    // Y: one run lacks pass@k (a line written before it existed), one run has no result yet.
    result('trained', 0, 'Y', [0.25, 0.75], [0.5, 0.9], 4),
    result('trained', 1, 'Y', [0, 0.5], undefined, 4),
    result('base', 0, 'X', [0.1, 0.3, 0.2], [0.2, 0.3, 0.35], null),
  ];
  const json = buildResultsJson(exp, results);
  assert.deepEqual(Object.keys(json.methods), ['base', 'trained']);
  assert.deepEqual(Object.keys(json.methods.trained!.benchmarks), ['X', 'Y']);
  const x = json.methods.trained!.benchmarks.X!;
  // Run scores 0.6, 0.3, 0.9 (seed order 0, 1, 2): mean 0.6, std √((0 + 0.09 + 0.09) / 2) = 0.3.
  assert.deepEqual(x.trainingSeeds, [0, 1, 2]);
  x.seeds.forEach((v, i) => close(v, [0.6, 0.3, 0.9][i]!, `X seeds[${i}]`));
  close(x.mean, 0.6, 'X mean');
  close(x.std!, 0.3, 'X std');
  assert.equal(x.n, 3);
  assert.deepEqual(x.steps, [4, 4, 4]);
  // pass@1: 0.6, 0.3, 0.9 → 0.6 ± 0.3; pass@2: 0.8, 0.5, 1 → mean 23/30, std √((1/900 + 64/900 + 49/900) / 2) = √(57/900).
  assert.deepEqual(x.passAtK!.map((p) => p.k), [1, 2]);
  close(x.passAtK![0]!.mean, 0.6, 'pass@1 mean');
  close(x.passAtK![0]!.std!, 0.3, 'pass@1 std');
  close(x.passAtK![1]!.mean, 23 / 30, 'pass@2 mean');
  close(x.passAtK![1]!.std!, Math.sqrt(57 / 900), 'pass@2 std');
  assert.deepEqual(x.passAtK![1]!.seeds, [0.8, 0.5, 1]);
  // Y: run scores 0.5, 0.25 → mean 0.375, std √((0.125² · 2) / 1) = 0.125 · √2; no pass@k (seed 1 has none).
  const y = json.methods.trained!.benchmarks.Y!;
  assert.deepEqual([y.n, y.trainingSeeds, y.seeds], [2, [0, 1], [0.5, 0.25]]);
  close(y.std!, 0.125 * Math.SQRT2, 'Y std');
  assert.equal(y.passAtK, undefined);
  // The prompt-only row: one run, no std, step null; its missing column is null.
  const b = json.methods.base!.benchmarks;
  close(b.X!.mean, 0.2, 'base mean');
  assert.deepEqual([b.X!.std, b.X!.steps, b.X!.passAtK!.map((p) => p.std), b.Y], [null, [null], [null, null, null], null]);
});

function metricsFile(out: string, row: string, seed: number, lines: StepMetrics[]): void {
  const dir = join(out, 'runs', row, `seed-${seed}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'metrics.jsonl'), lines.map(encodeMetrics).join(''));
}

test('a curve per benchmark: training reward averaged over seeds at common steps, held-out score per checkpoint step, the untrained row as a level', async () => {
  const out = join(root, 'curves');
  metricsFile(out, 'trained', 0, [{ step: 0, score_mean: 0.1 }, { step: 1, score_mean: 0.2 }, { step: 2, score_mean: 0.3 }]);
  metricsFile(out, 'trained', 1, [{ step: 0, score_mean: 0.3 }, { step: 1, score_mean: 0.4 }]); // stopped after step 1
  metricsFile(out, 'trained', 2, [{ step: 0, score_mean: null }]); // no score yet: not a curve
  const results = [
    result('trained', 0, 'X', [0.5], undefined, 3),
    result('trained', 1, 'X', [0.7], undefined, 3),
    result('trained', 2, 'X', [0.2], undefined, 2), // another step: its own point, never pooled
    result('base', 0, 'X', [0.15], undefined, null),
  ];
  const metrics = new Map<string, StepMetrics[]>();
  for (const seed of readdirSync(join(out, 'runs', 'trained'))) {
    const lines = readFileSync(join(out, 'runs', 'trained', seed, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as StepMetrics);
    metrics.set(resultKey('trained', Number(seed.slice('seed-'.length)), ''), lines);
  }
  const chart = curveChart(exp, 'X', metrics, results);
  assert.deepEqual(chart.series.map((s) => [s.label, s.dashed ?? false]), [
    ['trained: training reward (score_mean, mean over 2 seeds)', false],
    ['trained: X held-out score (mean over the seeds scored at each step)', true],
    ['base: X score, untrained (mean over 1 seed)', true],
  ]);
  const [reward, heldOut, level] = chart.series;
  // Steps 0 and 1 are common to seeds 0 and 1: (0.1 + 0.3)/2, (0.2 + 0.4)/2.
  reward!.points.forEach(([s, v], i) => { assert.equal(s, i); close(v, [0.2, 0.3][i]!, `reward ${i}`); });
  assert.deepEqual(heldOut!.points.map(([s]) => s), [2, 3]);
  close(heldOut!.points[0]![1], 0.2, 'step 2');
  close(heldOut!.points[1]![1], 0.6, 'step 3: (0.5 + 0.7) / 2');
  assert.deepEqual(level!.points, [[0, 0.15], [3, 0.15]], 'across the x range of the other series');
  assert.equal(reward!.color, heldOut!.color, 'one colour per method');
  // Column Y has no result: the trained row's reward only; the chart still renders.
  assert.deepEqual(curveChart(exp, 'Y', metrics, results).series.map((s) => s.label), ['trained: training reward (score_mean, mean over 2 seeds)']);
  const files = await writeCurves(exp, out, results);
  assert.deepEqual(files, [curveFile(out, 'X'), curveFile(out, 'Y')]);
  const svg = readFileSync(curveFile(out, 'X'), 'utf8');
  assert.match(svg, /^<svg /);
  for (const s of chart.series) assert.ok(svg.includes(s.label.replace(/&/g, '&amp;')), `legend: ${s.label}`);
});

test('progress: cells done of the total and the time left from the measured seconds per training step and per evaluation', () => {
  // 2 runs × 20 steps left, 6 cells: nothing measured yet.
  assert.equal(estimateLeft(40, 6, { trainSeconds: 0, trainSteps: 0, evalSeconds: 0, evals: 0 }), 'unknown until a run has trained and an evaluation has finished');
  assert.equal(estimateLeft(0, 6, { trainSeconds: 0, trainSteps: 0, evalSeconds: 0, evals: 0 }), 'unknown until an evaluation has finished');
  // 20 steps in 50 s (2.5 s a step), 2 evaluations in 8 s (4 s each): 20 × 2.5 + 4 × 4 = 66 s.
  assert.equal(estimateLeft(20, 4, { trainSeconds: 50, trainSteps: 20, evalSeconds: 8, evals: 2 }), 66);
  assert.deepEqual([formatDuration(12.34), formatDuration(66), formatDuration(3600 * 2 + 180 + 29)], ['12.3 s', '1 min 06 s', '2 h 03 min']);

  let now = 1_000_000;
  const p = new ExperimentProgress({ cells: 6, cellsDone: 1, runs: 2, runsDone: 0, stepsLeft: 40 }, () => now);
  assert.equal(p.plan(), 'experiment: 6 cells (row × seed × column): 1 done, 5 to evaluate; 2 of 2 runs to train or resume (40 steps)');
  now += 50_000;
  p.trained(20, 50);
  assert.equal(p.line(), 'experiment: progress: 1 of 6 cells done, 1 of 2 runs trained; 50.0 s elapsed, time left unknown until an evaluation has finished');
  now += 4_000;
  p.evaluated(4);
  // 20 steps × 2.5 s + 4 cells × 4 s = 66 s.
  assert.equal(p.line(), 'experiment: progress: 2 of 6 cells done, 1 of 2 runs trained; 54.0 s elapsed, about 1 min 06 s left');
});
