// The PNG encoder and the reward plot (fast tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { crc32, encodePng } from '../../src/demo/png.ts';
import { PALETTE, niceStep, renderLineChart } from '../../src/demo/plot.ts';

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at);

/** Walks a PNG's chunks, checking every CRC; returns them by type. */
function chunks(png: Uint8Array): Map<string, Uint8Array[]> {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const out = new Map<string, Uint8Array[]>();
  let at = 8;
  while (at < png.length) {
    const len = u32(png, at);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + len);
    assert.equal(u32(png, at + 8 + len), crc32(png.subarray(at + 4, at + 8 + len)), `CRC of ${type}`);
    out.set(type, [...(out.get(type) ?? []), data]);
    at += 12 + len;
  }
  assert.equal(at, png.length);
  return out;
}

test('crc32 matches the standard check value', () => {
  assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
});

test('encodePng writes a valid 8-bit RGB PNG whose pixels decode back exactly', () => {
  const w = 3;
  const h = 2;
  const rgb = Uint8Array.from({ length: w * h * 3 }, (_, i) => (i * 37) % 256);
  const c = chunks(encodePng(w, h, rgb));
  const ihdr = c.get('IHDR')![0]!;
  assert.equal(u32(ihdr, 0), w);
  assert.equal(u32(ihdr, 4), h);
  assert.deepEqual([...ihdr.subarray(8)], [8, 2, 0, 0, 0]);
  assert.ok(c.has('IEND'));
  const raw = inflateSync(c.get('IDAT')![0]!);
  assert.equal(raw.length, h * (1 + w * 3));
  for (let y = 0; y < h; y++) {
    assert.equal(raw[y * (1 + w * 3)], 0);
    assert.deepEqual([...raw.subarray(y * (1 + w * 3) + 1, (y + 1) * (1 + w * 3))], [...rgb.subarray(y * w * 3, (y + 1) * w * 3)]);
  }
  assert.throws(() => encodePng(2, 2, new Uint8Array(5)), /expected 12 bytes/);
});

test('niceStep picks 1, 2 or 5 times a power of ten', () => {
  assert.equal(niceStep(1, 5), 0.2);
  assert.equal(niceStep(60, 8), 10);
  assert.equal(niceStep(150, 8), 20);
  assert.equal(niceStep(7, 8), 1);
});

test('the chart draws each series in its colour, higher values higher up', () => {
  const canvas = renderLineChart({
    title: 'T',
    xLabel: 'step',
    yLabel: 'reward',
    series: [
      { label: 'high', values: [0.9, 0.9, 0.9], color: PALETTE.blue },
      { label: 'low', values: [0.1, 0.1, 0.1], color: PALETTE.orange },
    ],
    width: 400,
    height: 300,
  });
  const rowsWith = (color: readonly number[]) => {
    const rows: number[] = [];
    for (let y = 0; y < canvas.height; y++)
      for (let x = 250; x < 370; x++) {
        const i = (y * canvas.width + x) * 3;
        if (canvas.pixels_HW3[i] === color[0] && canvas.pixels_HW3[i + 1] === color[1] && canvas.pixels_HW3[i + 2] === color[2]) {
          rows.push(y);
          break;
        }
      }
    return rows;
  };
  const blue = rowsWith(PALETTE.blue);
  const orange = rowsWith(PALETTE.orange);
  assert.ok(blue.length > 0 && orange.length > 0);
  // The lines (right of the legend in the upper left) sit where 0.9 and 0.1 map: the top 48 px
  // margin, the bottom 64 px margin, 188 px of plot in between.
  assert.ok(Math.abs(Math.min(...blue) - (236 - 0.9 * 188)) <= 2, `blue at ${Math.min(...blue)}`);
  assert.ok(Math.abs(Math.min(...orange) - (236 - 0.1 * 188)) <= 2, `orange at ${Math.min(...orange)}`);
  assert.ok(chunks(canvas.toPng()).has('IDAT'));
});
