// Learning curves from metrics.jsonl lines: one run's rewards per agent, team score and held-out
// score (RUN/learning-curve.svg), or one metric across several runs (an experiment's rows).
// x is the step as metrics.jsonl numbers it (0 = the first step), the numbering the samples files
// and the dashboard use.
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { MetricsLog, type StepMetrics } from '../runs/metrics-log.ts';
import { writeFileAtomic } from '../runs/atomic-write.ts';
import { type LineChart, type LineSeries, lineChartSvg } from './line-chart.ts';

export const LEARNING_CURVE_FILE = 'learning-curve.svg';

/** [step, value] of every line where `key` holds a finite number. */
export function metricPoints(metrics: readonly StepMetrics[], key: string): [number, number][] {
  return metrics.flatMap((m) => (typeof m.step === 'number' && typeof m[key] === 'number' && Number.isFinite(m[key]) ? [[m.step, m[key]] as [number, number]] : []));
}

/** One run's chart: the team score of the rollouts, each agent's reward, the held-out score (dashed). */
export function learningCurve(metrics: readonly StepMetrics[], title: string): LineChart {
  const agentKeys = [...new Set(metrics.flatMap((m) => Object.keys(m).filter((k) => k.startsWith('reward/'))))].sort();
  const series: LineSeries[] = [
    { label: 'team score of the rollouts (score_mean)', points: metricPoints(metrics, 'score_mean') },
    ...agentKeys.map((k) => ({ label: `reward of ${k.slice('reward/'.length)}`, points: metricPoints(metrics, k) })),
    { label: 'held-out score (eval_score)', points: metricPoints(metrics, 'eval_score'), dashed: true },
  ].filter((s) => s.points.length > 0);
  return { title, xLabel: 'step', yLabel: 'reward / score', series };
}

/** One metric of several runs, e.g. the held-out score of each row of an experiment. */
export function metricAcrossRuns(runs: readonly { label: string; metrics: readonly StepMetrics[] }[], key: string, title: string): LineChart {
  return { title, xLabel: 'step', yLabel: key, series: runs.map((r) => ({ label: r.label, points: metricPoints(r.metrics, key) })).filter((s) => s.points.length > 0) };
}

/** Writes RUN/learning-curve.svg from RUN/metrics.jsonl; null (nothing written) when there are no metrics yet. */
export async function writeLearningCurve(runDir: string, title = `learning curve: ${runDir}`): Promise<string | null> {
  const file = join(runDir, 'metrics.jsonl');
  if (!existsSync(file)) return null;
  const metrics = await new MetricsLog(file).read();
  if (metrics.length === 0) return null;
  const out = join(runDir, LEARNING_CURVE_FILE);
  await writeFileAtomic(out, await lineChartSvg(learningCurve(metrics, title)));
  return out;
}
