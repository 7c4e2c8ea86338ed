// The demo's "reward per step" line chart, rasterised in TypeScript and saved through png.ts:
// axes with ticks and grid, one line per series, a legend, a title and axis labels.
import { GLYPH_ADVANCE, GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from './font.ts';
import { encodePng } from './png.ts';

export type Rgb = readonly [number, number, number];

export class Canvas {
  readonly pixels_HW3: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb = [255, 255, 255],
  ) {
    this.pixels_HW3 = new Uint8Array(width * height * 3);
    this.fillRect(0, 0, width, height, background);
  }

  set(x: number, y: number, color: Rgb): void {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (y * this.width + x) * 3;
    this.pixels_HW3[i] = color[0];
    this.pixels_HW3[i + 1] = color[1];
    this.pixels_HW3[i + 2] = color[2];
  }

  fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    for (let j = Math.round(y); j < Math.round(y + h); j++) for (let i = Math.round(x); i < Math.round(x + w); i++) this.set(i, j, color);
  }

  /** A straight segment `thickness` pixels wide; `dash` > 0 draws dashes of that length. */
  line(x0: number, y0: number, x1: number, y1: number, color: Rgb, thickness = 1, dash = 0): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    const r = (thickness - 1) / 2;
    for (let s = 0; s <= steps; s++) {
      if (dash > 0 && Math.floor(s / dash) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      this.fillRect(Math.round(x - r), Math.round(y - r), thickness, thickness, color);
    }
  }

  textWidth(text: string, scale: number): number {
    return text.length * GLYPH_ADVANCE * scale - scale;
  }

  /** Draws text with its top-left corner at (x, y); `vertical` rotates it 90° anticlockwise (reads bottom to top from (x, y)). */
  text(x: number, y: number, text: string, color: Rgb, scale = 2, vertical = false): void {
    [...text].forEach((ch, k) => {
      const rows = glyph(ch);
      for (let row = 0; row < GLYPH_HEIGHT; row++)
        for (let col = 0; col < GLYPH_WIDTH; col++) {
          if (!((rows[row]! >> (GLYPH_WIDTH - 1 - col)) & 1)) continue;
          const u = (k * GLYPH_ADVANCE + col) * scale;
          const v = row * scale;
          if (vertical) this.fillRect(x + v, y - u - scale, scale, scale, color);
          else this.fillRect(x + u, y + v, scale, scale, color);
        }
    });
  }

  toPng(): Uint8Array {
    return encodePng(this.width, this.height, this.pixels_HW3);
  }
}

export interface Series {
  label: string;
  values: number[];
  /** x of each value; default 1, 2, ... */
  steps?: number[];
  color: Rgb;
  /** Dashed line with a marker on each point (sparse measurements). */
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  yMin?: number;
  yMax?: number;
  width?: number;
  height?: number;
}

export const PALETTE = {
  blue: [31, 119, 180] as Rgb,
  orange: [255, 127, 14] as Rgb,
  green: [44, 160, 44] as Rgb,
  red: [214, 39, 40] as Rgb,
  grey: [127, 127, 127] as Rgb,
};

/** A "nice" tick spacing (1, 2 or 5 × 10^k) giving at most `maxTicks` intervals over `span`. */
export function niceStep(span: number, maxTicks: number): number {
  const raw = span / Math.max(1, maxTicks);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

function formatTick(v: number, step: number): string {
  const decimals = step >= 1 ? 0 : Math.min(4, Math.ceil(-Math.log10(step)));
  return v.toFixed(decimals);
}

export function renderLineChart(spec: ChartSpec): Canvas {
  const width = spec.width ?? 800;
  const height = spec.height ?? 480;
  const canvas = new Canvas(width, height);
  const black: Rgb = [0, 0, 0];
  const gridColor: Rgb = [225, 225, 225];
  const left = 92;
  const right = width - 24;
  const top = 48;
  const bottom = height - 64;
  const yMin = spec.yMin ?? 0;
  const yMax = spec.yMax ?? 1;
  const xOf = (s: Series, i: number) => s.steps?.[i] ?? i + 1;
  const nSteps = Math.max(1, ...spec.series.flatMap((s) => s.values.map((_, i) => xOf(s, i))));
  const xMin = Math.min(1, ...spec.series.flatMap((s) => s.values.map((_, i) => xOf(s, i))));
  const xMax = Math.max(xMin + 1, nSteps);
  const px = (x: number) => left + ((x - xMin) / (xMax - xMin)) * (right - left);
  const py = (y: number) => bottom - ((Math.min(yMax, Math.max(yMin, y)) - yMin) / (yMax - yMin)) * (bottom - top);

  const yStep = niceStep(yMax - yMin, 5);
  for (let v = Math.ceil(yMin / yStep) * yStep; v <= yMax + 1e-9; v += yStep) {
    canvas.line(left, py(v), right, py(v), gridColor);
    canvas.line(left - 6, py(v), left, py(v), black);
    const label = formatTick(v, yStep);
    canvas.text(left - 10 - canvas.textWidth(label, 2), py(v) - 7, label, black);
  }
  const xStep = niceStep(xMax - xMin, 8);
  for (let v = xMin === 0 ? 0 : xStep; v <= xMax; v += xStep) {
    canvas.line(px(v), bottom, px(v), bottom + 6, black);
    const label = formatTick(v, xStep);
    canvas.text(px(v) - canvas.textWidth(label, 2) / 2, bottom + 12, label, black);
  }
  canvas.line(left, top, left, bottom, black, 2);
  canvas.line(left, bottom, right, bottom, black, 2);

  for (const s of spec.series) {
    for (let i = 1; i < s.values.length; i++) canvas.line(px(xOf(s, i - 1)), py(s.values[i - 1]!), px(xOf(s, i)), py(s.values[i]!), s.color, 3, s.dashed ? 8 : 0);
    if (s.dashed || s.values.length === 1) s.values.forEach((v, i) => canvas.fillRect(px(xOf(s, i)) - 4, py(v) - 4, 9, 9, s.color));
  }

  canvas.text((width - canvas.textWidth(spec.title, 2)) / 2, 16, spec.title, black);
  canvas.text((left + right - canvas.textWidth(spec.xLabel, 2)) / 2, height - 26, spec.xLabel, black);
  canvas.text(10, (top + bottom + canvas.textWidth(spec.yLabel, 2)) / 2, spec.yLabel, black, 2, true);

  // Legend in the upper-left corner of the plot area: rewards start low and rise to the right.
  const legendWidth = 40 + Math.max(...spec.series.map((s) => canvas.textWidth(s.label, 2)));
  const legendX = left + 16;
  let legendY = top + 10;
  canvas.fillRect(legendX - 8, legendY - 6, legendWidth + 16, spec.series.length * 22 + 8, [255, 255, 255]);
  for (const s of spec.series) {
    canvas.line(legendX, legendY + 7, legendX + 28, legendY + 7, s.color, 3, s.dashed ? 8 : 0);
    canvas.text(legendX + 36, legendY, s.label, black);
    legendY += 22;
  }
  return canvas;
}
