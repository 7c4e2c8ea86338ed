// A minimal PNG encoder (8-bit RGB, no interlace) over node:zlib, so the demo can save its plot
// without native dependencies. Layout per the PNG spec: signature, IHDR, IDAT, IEND; each chunk is
// length ‖ type ‖ data ‖ CRC-32(type ‖ data).
import { deflateSync } from 'node:zlib';

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value >>> 0);
  return out;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const body = concat([new TextEncoder().encode(type), data]);
  return concat([u32(data.length), body, u32(crc32(body))]);
}

/** rgb_HW3: row-major, 3 bytes per pixel. */
export function encodePng(width: number, height: number, rgb_HW3: Uint8Array): Uint8Array {
  if (rgb_HW3.length !== width * height * 3) throw new Error(`encodePng: expected ${width * height * 3} bytes, got ${rgb_HW3.length}`);
  const header = new Uint8Array(13);
  header.set(u32(width), 0);
  header.set(u32(height), 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour
  // compression, filter and interlace methods stay 0
  const stride = width * 3;
  const raw = new Uint8Array((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter type None
    raw.set(rgb_HW3.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  const signature = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
  const compressed = new Uint8Array(deflateSync(raw, { level: 9 }));
  return concat([signature, chunk('IHDR', header), chunk('IDAT', compressed), chunk('IEND', new Uint8Array(0))]);
}
