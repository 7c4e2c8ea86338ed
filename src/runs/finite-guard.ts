// Catching non-finite numbers (NaN, ±Infinity) in what a run is about to keep: the parameters an
// engine writes into a checkpoint, and the live adapters and critics after each step. A diverged
// state is never checkpointed, so a resume always starts from finite parameters.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../engine/types.ts';
// The error and the scan engines use too (an engine's save path refuses non-finite parameters).
import { firstNonFinite, NonFiniteStateError } from '../engine/index.ts';
import { filesUnder } from './manifest.ts';

/** Whether a little-endian float in `bytes` has its exponent bits (`exponentMask`) all ones: IEEE 754 Inf or NaN. */
function anyNonFiniteBits(bytes: Uint8Array, width: 2 | 4 | 8, exponentMask: number, wordOffset: number): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = 0; o + width <= bytes.byteLength; o += width) {
    const word = width === 2 ? view.getUint16(o, true) : width === 4 ? view.getUint32(o, true) : view.getUint32(o + wordOffset, true);
    if ((word & exponentMask) >>> 0 === exponentMask >>> 0) return true;
  }
  return false;
}

/**
 * The first tensor of a safetensors file (the public format: u64 header length, JSON header, raw
 * little-endian data) holding a non-finite float, or null. Non-float dtypes are skipped.
 */
export async function nonFiniteTensor(file: string): Promise<string | null> {
  const buf = new Uint8Array(await readFile(file));
  if (buf.length < 8) return null; // not a safetensors file: the manifest, not this scan, judges damage
  const headerLength = Number(new DataView(buf.buffer, buf.byteOffset, 8).getBigUint64(0, true));
  if (8 + headerLength > buf.length) return null;
  let header: Record<string, { dtype: string; data_offsets: [number, number] }>;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + headerLength))) as typeof header;
  } catch {
    return null;
  }
  const data = buf.subarray(8 + headerLength);
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__' || !t?.data_offsets) continue;
    const bytes = data.subarray(t.data_offsets[0], t.data_offsets[1]);
    const bad =
      t.dtype === 'F32' ? anyNonFiniteBits(bytes, 4, 0x7f800000, 0)
      : t.dtype === 'F64' ? anyNonFiniteBits(bytes, 8, 0x7ff00000, 4)
      : t.dtype === 'F16' ? anyNonFiniteBits(bytes, 2, 0x7c00, 0)
      : t.dtype === 'BF16' ? anyNonFiniteBits(bytes, 2, 0x7f80, 0)
      : false;
    if (bad) return name;
  }
  return null;
}

/** Throws NonFiniteStateError naming the first safetensors file under `dir` (recursively) that holds a non-finite float. */
export async function assertFolderFinite(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (const rel of await filesUnder(dir)) {
    if (!rel.endsWith('.safetensors')) continue;
    const tensor = await nonFiniteTensor(join(dir, rel));
    if (tensor !== null) throw new NonFiniteStateError(`${rel} (tensor ${tensor})`);
  }
}

/**
 * A cheap look at the live parameters through the engine interface: one two-token forward pass per
 * adapter and critic. A NaN or infinite weight of a LoRA adapter, value head or MLP reaches every
 * output, so this finds a diverged update before the next step samples from it. Returns what is
 * not finite ("adapter 'policy'"), or null. (The tabular engine keeps a row per context, which this
 * probe does not reach; its metrics and its save path catch the same states.)
 */
export async function nonFiniteParameters(engine: Engine, adapters: readonly string[], critics: readonly string[]): Promise<string | null> {
  const probe = [{ tokens: [0, Math.min(1, engine.info.vocabSize - 1)], scoreFrom: 1 }];
  for (const name of adapters) {
    const out = await engine.forward({ kind: 'adapter', name }, probe);
    if (out.logprobs?.some((lp) => firstNonFinite(lp) >= 0)) return `the policy adapter '${name}'`;
  }
  for (const name of critics) {
    const out = await engine.forward({ kind: 'critic', name }, probe);
    if (out.values?.some((v) => firstNonFinite(v) >= 0)) return `the critic '${name}'`;
  }
  return null;
}
