// OUT/curves/<column>.svg: one learning-curve chart per benchmark (src/plots/line-chart.ts), rebuilt
// from the run folders' metrics.jsonl and results.jsonl alone at the end of every call. Per method
// (row), in one colour:
//   - its training reward: metrics.jsonl's score_mean (the mean team score of the step's rollouts)
//     at every step that all of the row's runs have logged, averaged over those runs (solid);
//   - its held-out score on this benchmark: per evaluated checkpoint step, the mean over the runs
//     scored at that step (dashed; runs scored at different steps are never pooled);
//   - a prompt-only row (nothing trained): its benchmark score as a dashed level line across the chart.
// x counts the updates behind what is measured: metrics.jsonl's step s (0 = the first) samples with
// the policy after s updates, and the checkpoint of step N holds N updates, so both share the axis.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../runs/atomic-write.ts';
import { MetricsLog, type StepMetrics } from '../runs/metrics-log.ts';
import { metricPoints } from '../plots/learning-curve.ts';
import { PALETTE, lineChartSvg, type LineChart, type LineSeries } from '../plots/line-chart.ts';
import type { Experiment } from './experiment-file.ts';
import { resultKey, type ExperimentResult } from './results.ts';

export const CURVES_DIR = 'curves';
export const curveFile = (out: string, column: string): string => join(resolve(out), CURVES_DIR, `${column}.svg`);

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
const seedsText = (n: number): string => `${n} seed${n === 1 ? '' : 's'}`;

/** [step, mean over runs] at the steps every run has. */
function meanCurve(runs: [number, number][][]): [number, number][] {
  const byStep = runs.map((points) => new Map(points));
  const steps = [...byStep[0]!.keys()].filter((s) => byStep.every((m) => m.has(s))).sort((a, b) => a - b);
  return steps.map((s) => [s, mean(byStep.map((m) => m.get(s)!))]);
}

/** The chart of one column from the experiment's runs' metrics (metrics[row][seed], absent: no run folder) and results. */
export function curveChart(exp: Experiment, column: string, metrics: Map<string, StepMetrics[]>, results: ExperimentResult[]): LineChart {
  const found = new Map<string, ExperimentResult>();
  for (const r of results) if (!found.has(resultKey(r.row, r.seed, r.column))) found.set(resultKey(r.row, r.seed, r.column), r);
  const series: LineSeries[] = [];
  const levels: { label: string; value: number; color: string }[] = [];
  exp.rows.forEach((row, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const scored = row.seeds.flatMap((s) => found.get(resultKey(row.name, s, column)) ?? []);
    if (row.base) {
      if (scored.length > 0) levels.push({ label: `${row.name}: ${column} score, untrained (mean over ${seedsText(scored.length)})`, value: mean(scored.map((r) => r.score)), color });
      return;
    }
    const runs = row.seeds.flatMap((s) => {
      const m = metrics.get(resultKey(row.name, s, ''));
      const points = m ? metricPoints(m, 'score_mean') : [];
      return points.length > 0 ? [points] : [];
    });
    if (runs.length > 0) series.push({ label: `${row.name}: training reward (score_mean, mean over ${seedsText(runs.length)})`, points: meanCurve(runs), color });
    const steps = [...new Set(scored.map((r) => r.step).filter((s): s is number => s !== null))].sort((a, b) => a - b);
    if (steps.length > 0) {
      const counts = steps.map((s) => scored.filter((r) => r.step === s).length);
      const n = Math.min(...counts) === Math.max(...counts) ? seedsText(counts[0]!) : 'the seeds scored at each step';
      series.push({ label: `${row.name}: ${column} held-out score (mean over ${n})`, points: steps.map((s) => [s, mean(scored.filter((r) => r.step === s).map((r) => r.score))]), color, dashed: true });
    }
  });
  const xs = series.flatMap((s) => s.points.map(([x]) => x));
  const [lo, hi] = xs.length > 0 ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  for (const l of levels) series.push({ label: l.label, points: [[lo, l.value], [hi, l.value]], color: l.color, dashed: true });
  return { title: `${exp.name}: ${column}`, xLabel: 'updates (training steps done)', yLabel: 'score', series };
}

/** Reads every trained run's metrics.jsonl (keyed resultKey(row, seed, '')). */
async function readMetrics(exp: Experiment, out: string): Promise<Map<string, StepMetrics[]>> {
  const metrics = new Map<string, StepMetrics[]>();
  for (const row of exp.rows) {
    if (row.base) continue;
    for (const seed of row.seeds) {
      const file = join(resolve(out), 'runs', row.name, `seed-${seed}`, 'metrics.jsonl');
      if (existsSync(file)) metrics.set(resultKey(row.name, seed, ''), await new MetricsLog(file).read());
    }
  }
  return metrics;
}

/** Writes OUT/curves/<column>.svg for every column; returns the files written. */
export async function writeCurves(exp: Experiment, out: string, results: ExperimentResult[]): Promise<string[]> {
  const metrics = await readMetrics(exp, out);
  await mkdir(join(resolve(out), CURVES_DIR), { recursive: true });
  const files: string[] = [];
  for (const column of exp.columns) {
    const file = curveFile(out, column.name);
    await writeFileAtomic(file, await lineChartSvg(curveChart(exp, column.name, metrics, results)));
    files.push(file);
  }
  return files;
}
