// A PNG reader for the plot tests, independent of the renderer that wrote the file: checks the
// signature and every chunk's CRC, inflates IDAT and undoes the row filters (PNG spec, section 9),
// for 8-bit RGB or RGBA images without interlacing (what resvg writes). Returns RGBA pixels.
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function decodePng(png: Uint8Array): { width: number; height: number; rgba: Uint8Array } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8;
  let header: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  while (at < png.length) {
    const len = view.getUint32(at);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    assert.equal(view.getUint32(at + 8 + len), crc32(png.subarray(at + 4, at + 8 + len)), `CRC of ${type}`);
    const data = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') header = data;
    if (type === 'IDAT') idat.push(data);
    at += 12 + len;
    if (type === 'IEND') break;
  }
  assert.equal(at, png.length, 'nothing after IEND');
  assert.ok(header, 'an IHDR chunk');
  const h = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const width = h.getUint32(0);
  const height = h.getUint32(4);
  const [depth, colorType, , , interlace] = header.subarray(8);
  assert.equal(depth, 8);
  assert.ok(colorType === 2 || colorType === 6, `colour type ${colorType}`);
  assert.equal(interlace, 0);
  const channels = colorType === 6 ? 4 : 3;
  const compressed = new Uint8Array(idat.reduce((n, d) => n + d.length, 0));
  idat.reduce((off, d) => (compressed.set(d, off), off + d.length), 0);
  const raw = inflateSync(compressed);
  const stride = width * channels;
  assert.equal(raw.length, height * (1 + stride));
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (1 + stride)]!;
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (1 + stride) + 1 + i]!;
      const a = i >= channels ? out[y * stride + i - channels]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + i]! : 0;
      const c = i >= channels && y > 0 ? out[(y - 1) * stride + i - channels]! : 0;
      const paeth = () => {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      };
      const predictor = [0, a, b, (a + b) >> 1, 0][filter] ?? assert.fail(`filter ${filter}`);
      out[y * stride + i] = (x + (filter === 4 ? paeth() : predictor)) & 0xff;
    }
  }
  if (channels === 4) return { width, height, rgba: out };
  const rgba = new Uint8Array(width * height * 4);
  for (let p = 0; p < width * height; p++) rgba.set([out[p * 3]!, out[p * 3 + 1]!, out[p * 3 + 2]!, 255], p * 4);
  return { width, height, rgba };
}
