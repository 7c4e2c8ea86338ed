// Optimiser state on disk, bit-exact: "MARFTOPT" | u32 header length | JSON header | float32 payload.
// The header lists the step count and the length of each moment array; the payload holds every m, then every v.
import { readFileSync, writeFileSync } from 'node:fs';

/** An Adam optimiser's state: what the file holds. */
export interface AdamState {
  step: number;
  /** First and second moments, one pair per parameter, in the parameter order of the trainable. */
  m: Float32Array[];
  v: Float32Array[];
}

const MAGIC = 'MARFTOPT';

export function writeAdamState(file: string, state: AdamState, label: string): void {
  const header = new TextEncoder().encode(JSON.stringify({ format: 1, label, step: state.step, sizes: state.m.map((m) => m.length) }));
  const total = state.m.reduce((a, m) => a + m.length, 0) * 2;
  const start = 12 + header.length;
  const out = new Uint8Array(start + total * 4);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(8, header.length, true);
  out.set(header, 12);
  let o = start;
  for (const a of [...state.m, ...state.v]) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), o);
    o += a.byteLength;
  }
  writeFileSync(file, out);
}

export function readAdamState(file: string, expectedSizes: number[]): AdamState {
  const buf = readFileSync(file);
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${file} is not a marft optimiser state file`);
  const hlen = buf.readUInt32LE(8);
  const header = JSON.parse(buf.toString('utf8', 12, 12 + hlen)) as { step: number; sizes: number[] };
  if (header.sizes.length !== expectedSizes.length || header.sizes.some((s, i) => s !== expectedSizes[i])) {
    throw new Error(`${file} holds optimiser state for different parameters (${header.sizes.length} tensors) than this trainable (${expectedSizes.length})`);
  }
  const start = 12 + hlen;
  const bytes = buf.subarray(start);
  const all = new Float32Array(bytes.length / 4);
  new Uint8Array(all.buffer).set(bytes);
  const m: Float32Array[] = [], v: Float32Array[] = [];
  let o = 0;
  for (const s of header.sizes) { m.push(all.slice(o, o + s)); o += s; }
  for (const s of header.sizes) { v.push(all.slice(o, o + s)); o += s; }
  return { step: header.step, m, v };
}
