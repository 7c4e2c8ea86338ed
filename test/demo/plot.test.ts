// The plots (src/plots/): a line chart's SVG carries every data point where its scale puts it, in its
// series' colour; its PNG decodes to the SVG's size with those colours; a run's learning curve reads
// metrics.jsonl. (The demo's reward-per-step plot is such a chart: test/demo/demo.test.ts runs the demo.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PALETTE, lineChartSvg } from '../../src/plots/line-chart.ts';
import { svgToPng } from '../../src/plots/png.ts';
import { learningCurve, metricAcrossRuns, writeLearningCurve } from '../../src/plots/learning-curve.ts';
import { MetricsLog } from '../../src/runs/metrics-log.ts';
import { makeSampleRun } from '../fixtures/sample-run.ts';
import { decodePng } from './png-decode.ts';

/** The chart's point marks: their data (from Vega's aria labels) and their position in the plot area. */
function points(svg: string): { label: Record<string, string>; x: number; y: number; fill: string }[] {
  return [...svg.matchAll(/<path aria-label="([^"]*)" role="graphics-symbol" aria-roledescription="point" transform="translate\(([-\d.e]+),([-\d.e]+)\)"[^>]*fill="([^"]+)"/g)].map((m) => ({
    label: Object.fromEntries(m[1]!.split('; ').map((kv) => kv.split(': ') as [string, string])),
    x: Number(m[2]),
    y: Number(m[3]),
    fill: m[4]!,
  }));
}

const chart = {
  title: 'T',
  xLabel: 'step',
  yLabel: 'reward',
  yDomain: [0, 1] as [number, number],
  width: 400,
  height: 200,
  series: [
    { label: 'high', points: [[1, 0.9], [2, 0.8], [3, 0.9]] as [number, number][] },
    { label: 'low', points: [[1, 0.1], [2, Number.NaN], [3, 0.3]] as [number, number][], dashed: true },
  ],
};

test('a line chart is an SVG document with each finite data point at its place, in its series colour', async () => {
  const svg = await lineChartSvg(chart);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* width="(\d+)" height="(\d+)"/);
  assert.ok(svg.trimEnd().endsWith('</svg>'));
  const ps = points(svg);
  assert.deepEqual(ps.map((p) => [p.label.series, Number(p.label.step), Number(p.label.reward)]), [
    ['high', 1, 0.9], ['high', 2, 0.8], ['high', 3, 0.9],
    ['low', 1, 0.1], ['low', 3, 0.3], // the NaN is left out
  ]);
  // y: the 200-pixel plot area maps 0 → 200 and 1 → 0; x: steps 1..3 over 400 pixels.
  for (const p of ps) {
    assert.ok(Math.abs(p.y - 200 * (1 - Number(p.label.reward))) < 0.5, `y of ${JSON.stringify(p.label)}: ${p.y}`);
    assert.ok(Math.abs(p.x - 200 * (Number(p.label.step) - 1)) < 0.5, `x of ${JSON.stringify(p.label)}: ${p.x}`);
    assert.equal(p.fill, p.label.series === 'high' ? PALETTE[0] : PALETTE[1]);
  }
  assert.match(svg, /stroke="#f58518" stroke-width="2" stroke-dasharray="6,4"/, 'the sparse series is dashed');
  await assert.rejects(lineChartSvg({ ...chart, series: [chart.series[0]!, chart.series[0]!] }), /two series share a label/);
});

test('the PNG decodes to the SVG size (times the scale) and shows the series colours', async () => {
  const svg = await lineChartSvg(chart);
  const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(svg)!.map(Number);
  for (const scale of [1, 2]) {
    const png = decodePng(svgToPng(svg, scale));
    assert.equal(png.width, w! * scale);
    assert.equal(png.height, h! * scale);
    const has = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      for (let i = 0; i < png.rgba.length; i += 4) if (png.rgba[i] === r && png.rgba[i + 1] === g && png.rgba[i + 2] === b && png.rgba[i + 3] === 255) return true;
      return false;
    };
    assert.ok(has(PALETTE[0]) && has(PALETTE[1]), 'both series are drawn');
    assert.ok(has('#ffffff'), 'white background');
  }
});

test("a run's learning curve has the team score, each agent's reward and the held-out score, from metrics.jsonl", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-plot-'));
  try {
    const run = join(dir, 'run');
    await makeSampleRun(run, { kind: 'marft', steps: 12, samplesEvery: 100, episodesPerStep: 1 });
    const metrics = await new MetricsLog(join(run, 'metrics.jsonl')).read();
    const c = learningCurve(metrics, 'run');
    assert.deepEqual(c.series.map((s) => [s.label, s.points.length, s.dashed === true]), [
      ['team score of the rollouts (score_mean)', 12, false],
      ['reward of planner', 12, false],
      ['reward of solver', 12, false],
      ['held-out score (eval_score)', 2, true],
    ]);
    assert.deepEqual(c.series[3]!.points, metrics.filter((m) => m.eval_score !== undefined).map((m) => [m.step, m.eval_score]));
    const file = await writeLearningCurve(run, 'run');
    assert.equal(file, join(run, 'learning-curve.svg'));
    const svg = readFileSync(file!, 'utf8');
    assert.equal(points(svg).length, 12 * 3 + 2);
    const across = metricAcrossRuns([{ label: 'a', metrics }, { label: 'b', metrics: metrics.slice(0, 5) }], 'eval_score', 'held-out');
    assert.deepEqual(across.series.map((s) => [s.label, s.points.length]), [['a', 2], ['b', 1]]);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    assert.equal(await writeLearningCurve(empty), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
