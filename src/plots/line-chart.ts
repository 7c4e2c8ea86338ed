// Line charts as SVG, drawn by Vega-Lite (compiled to a Vega specification, rendered headless by
// Vega's SVG string renderer: no browser and no canvas needed). Every plot a run folder, the demo
// or an experiment writes goes through lineChartSvg; ./png.ts rasterises one where a PNG is needed.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export interface LineSeries {
  label: string;
  /** [x, y] pairs; a non-finite y is left out (a gap in the line). */
  points: [number, number][];
  /** A CSS colour; default: the next of PALETTE. */
  color?: string;
  /** Dashed, for sparse measurements (e.g. a held-out score every few steps). */
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: LineSeries[];
  /** The y axis's range; default: fitted to the data. */
  yDomain?: [number, number];
  /** The plotting area's size in pixels (axes, title and legend come on top). */
  width?: number;
  height?: number;
}

/** Tableau 10, Vega's default categorical colours. */
export const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac'] as const;

/** The Vega-Lite specification of a chart (its data inline: one row per point). */
export function lineChartSpec(chart: LineChart): TopLevelSpec {
  const labels = chart.series.map((s) => s.label);
  if (new Set(labels).size !== labels.length) throw new Error(`line chart '${chart.title}': two series share a label`);
  const colors = chart.series.map((s, i) => s.color ?? PALETTE[i % PALETTE.length]!);
  const values = chart.series.flatMap((s) => s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).map(([x, y]) => ({ series: s.label, x, y, line: s.dashed ? 'dashed' : 'solid' })));
  const color = { field: 'series', type: 'nominal', title: null, scale: { domain: labels, range: colors }, legend: { orient: 'bottom', direction: 'vertical', labelLimit: 600 } } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: chart.width ?? 640,
    height: chart.height ?? 320,
    background: 'white',
    config: { font: 'sans-serif', axis: { labelFontSize: 12, titleFontSize: 13 }, legend: { labelFontSize: 12 }, title: { fontSize: 15 } },
    data: { values },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: chart.xLabel, scale: { zero: false, nice: false } },
      y: { field: 'y', type: 'quantitative', title: chart.yLabel, ...(chart.yDomain ? { scale: { domain: chart.yDomain } } : { scale: { zero: false } }) },
      color,
      // Its own field: sharing `series` with the colour would merge the two legends.
      strokeDash: { field: 'line', type: 'nominal', scale: { domain: ['solid', 'dashed'], range: [[1, 0], [6, 4]] }, legend: null },
    },
    layer: [{ mark: { type: 'line', strokeWidth: 2 } }, { mark: { type: 'point', filled: true, size: 24 } }],
  } as TopLevelSpec;
}

/** The chart as a standalone SVG document. */
export async function lineChartSvg(chart: LineChart): Promise<string> {
  const view = new vega.View(vega.parse(compile(lineChartSpec(chart)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
