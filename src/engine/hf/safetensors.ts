// safetensors I/O (https://github.com/huggingface/safetensors, "Format"): an 8-byte little-endian
// header length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?},
// then the raw little-endian tensor bytes, offsets relative to the byte after the header.
//
// Everything is read into float32 (F32 as is, F16/BF16/F64 converted), one tensor at a time
// straight from the file, so a multi-gigabyte checkpoint is never held twice. Writing is F32
// only, with the header padded to a multiple of 8 bytes like the reference implementation, and
// atomic (temporary file in the same folder, then rename).

import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { endianness } from 'node:os';
import { sharedFloats } from '../shareable-arrays.ts';

export interface HostTensor {
  shape: number[];
  data: Float32Array;
}

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16' | 'F64';

export interface TensorInfo {
  dtype: string;
  shape: number[];
  /** Byte range relative to the start of the data section. */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  tensors: Map<string, TensorInfo>;
  metadata: Record<string, string>;
  /** File offset of the data section (8 + header length). */
  dataStart: number;
  fileSize: number;
}

const BYTES_PER_ELEMENT: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };
/** Headers larger than this are refused, as the reference implementation does (100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

function assertLittleEndianHost(): void {
  if (endianness() !== 'LE') throw new Error('safetensors: only little-endian hosts are supported');
}

function numel(shape: number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Parses and validates the header of `file` (no tensor data is read). */
export function readSafetensorsHeader(file: string): SafetensorsHeader {
  const fd = openSync(file, 'r');
  try {
    return readHeaderFd(fd, file);
  } finally {
    closeSync(fd);
  }
}

function readHeaderFd(fd: number, file: string): SafetensorsHeader {
  const fileSize = fstatSync(fd).size;
  if (fileSize < 8) throw new Error(`${file}: not a safetensors file (${fileSize} bytes, truncated header length)`);
  const lenBuf = new Uint8Array(8);
  readSync(fd, lenBuf, 0, 8, 0);
  const headerLen = Number(new DataView(lenBuf.buffer).getBigUint64(0, true));
  if (headerLen > MAX_HEADER_BYTES) throw new Error(`${file}: header length ${headerLen} is implausible (not a safetensors file?)`);
  if (8 + headerLen > fileSize) throw new Error(`${file}: truncated (header says ${headerLen} bytes, file has ${fileSize - 8} after the length)`);
  const headerBuf = new Uint8Array(headerLen);
  readSync(fd, headerBuf, 0, headerLen, 8);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(headerBuf));
  } catch (e) {
    throw new Error(`${file}: the safetensors header is not valid JSON (${(e as Error).message})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file}: the safetensors header is not a JSON object`);
  const dataStart = 8 + headerLen;
  const dataSize = fileSize - dataStart;
  const tensors = new Map<string, TensorInfo>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof info?.dtype !== 'string' || !Array.isArray(info.shape) || !Array.isArray(info.data_offsets) || info.data_offsets.length !== 2) {
      throw new Error(`${file}: tensor "${name}" has a malformed header entry ${JSON.stringify(raw)}`);
    }
    const shape = info.shape as number[];
    if (!shape.every((d) => Number.isInteger(d) && d >= 0)) throw new Error(`${file}: tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
    const [begin, end] = info.data_offsets as number[];
    if (!Number.isInteger(begin) || !Number.isInteger(end) || begin < 0 || end < begin) {
      throw new Error(`${file}: tensor "${name}" has invalid data_offsets ${JSON.stringify(info.data_offsets)}`);
    }
    const width = BYTES_PER_ELEMENT[info.dtype as SafetensorsDtype];
    if (width !== undefined && end - begin !== numel(shape) * width) {
      throw new Error(`${file}: tensor "${name}" (${info.dtype} ${JSON.stringify(shape)}) needs ${numel(shape) * width} bytes, its offsets span ${end - begin}`);
    }
    if (end > dataSize) {
      throw new Error(`${file}: truncated: tensor "${name}" ends at byte ${end} of the data section, which has only ${dataSize} bytes`);
    }
    tensors.set(name, { dtype: info.dtype, shape: [...shape], begin, end });
  }
  return { tensors, metadata, dataStart, fileSize };
}

/** The __metadata__ string map of `file` ({} when absent). */
export function readSafetensorsMetadata(file: string): Record<string, string> {
  return readSafetensorsHeader(file).metadata;
}

/**
 * Reads every tensor of `file` (or those `include` accepts) into float32. Throws, naming the file
 * and the tensor, for dtypes other than F32/F16/BF16/F64 and for truncated files.
 */
export function readSafetensors(file: string, include?: (name: string) => boolean): Map<string, HostTensor> {
  assertLittleEndianHost();
  const fd = openSync(file, 'r');
  try {
    const header = readHeaderFd(fd, file);
    const out = new Map<string, HostTensor>();
    for (const [name, info] of header.tensors) {
      if (include && !include(name)) continue;
      out.set(name, { shape: info.shape, data: readTensorFd(fd, file, name, info, header.dataStart) });
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

function readTensorFd(fd: number, file: string, name: string, info: TensorInfo, dataStart: number): Float32Array {
  const dtype = info.dtype as SafetensorsDtype;
  if (BYTES_PER_ELEMENT[dtype] === undefined) {
    throw new Error(`${file}: tensor "${name}" has dtype ${info.dtype}; only F32, F16, BF16 and F64 are supported`);
  }
  const n = numel(info.shape);
  const bytes = info.end - info.begin;
  const position = dataStart + info.begin;
  // Shared memory from the start: the embedded engine's parameters (embedded/param.ts) live there
  // and take these arrays as they are.
  if (dtype === 'F32') {
    const out = sharedFloats(n);
    readFully(fd, new Uint8Array(out.buffer), position, file, name);
    return out;
  }
  const raw = new Uint8Array(bytes);
  readFully(fd, raw, position, file, name);
  const out = sharedFloats(n);
  if (dtype === 'BF16') {
    // bfloat16 is the top half of a float32.
    const src = new Uint16Array(raw.buffer, 0, n);
    const dst = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) dst[i] = src[i] << 16;
  } else if (dtype === 'F16') {
    const src = new Uint16Array(raw.buffer, 0, n);
    const table = f16Table();
    for (let i = 0; i < n; i++) out[i] = table[src[i]];
  } else {
    const src = new Float64Array(raw.buffer, 0, n);
    for (let i = 0; i < n; i++) out[i] = src[i];
  }
  return out;
}

function readFully(fd: number, dst: Uint8Array, position: number, file: string, name: string): void {
  let done = 0;
  while (done < dst.length) {
    // Large tensors are read in chunks: a single read() returns at most ~2 GiB on Linux.
    const chunk = Math.min(dst.length - done, 1 << 30);
    const got = readSync(fd, dst, done, chunk, position + done);
    if (got === 0) throw new Error(`${file}: truncated while reading tensor "${name}"`);
    done += got;
  }
}

let f16ToF32: Float32Array | null = null;

/** All 65,536 half-precision values as float32 (IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits). */
function f16Table(): Float32Array {
  if (f16ToF32) return f16ToF32;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) t[h] = sign * frac * 2 ** -24;
    else if (exp === 31) t[h] = frac === 0 ? sign * Infinity : NaN;
    else t[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  f16ToF32 = t;
  return t;
}

/**
 * Writes `tensors` as F32 safetensors. Tensors are laid out in name order (the reference
 * implementation sorts by dtype alignment, then name; all are F32 here), the header JSON is
 * padded with spaces to a multiple of 8 bytes, and the file appears atomically.
 */
export function writeSafetensors(
  file: string,
  tensors: Map<string, HostTensor> | Record<string, HostTensor>,
  metadata?: Record<string, string>,
): void {
  assertLittleEndianHost();
  const entries = (tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of entries) {
    if (name === '__metadata__') throw new Error('writeSafetensors: "__metadata__" is not a valid tensor name');
    if (t.data.length !== numel(t.shape)) {
      throw new Error(`writeSafetensors: tensor "${name}" has shape ${JSON.stringify(t.shape)} (${numel(t.shape)} elements) but ${t.data.length} values`);
    }
    const bytes = t.data.length * 4;
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const text = new TextEncoder().encode(JSON.stringify(header));
  const json = new Uint8Array(Math.ceil(text.length / 8) * 8).fill(0x20);
  json.set(text);
  const len = new Uint8Array(8);
  new DataView(len.buffer).setBigUint64(0, BigInt(json.length), true);

  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${Date.now()}-${tmpCounter++}`);
  const fd = openSync(tmp, 'w');
  try {
    writeAll(fd, len);
    writeAll(fd, json);
    for (const [, t] of entries) writeAll(fd, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    fsyncSync(fd);
    closeSync(fd);
  } catch (e) {
    closeSync(fd);
    if (existsSync(tmp)) unlinkSync(tmp);
    throw e;
  }
  renameSync(tmp, file);
}

let tmpCounter = 0;

function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, Math.min(bytes.length - done, 1 << 30));
}

/**
 * The weights of a Hugging Face model folder: model.safetensors, or the shards listed in
 * model.safetensors.index.json's weight_map (every listed tensor must be found in its shard).
 */
export function loadHfWeights(dir: string, include?: (name: string) => boolean): Map<string, HostTensor> {
  const single = join(dir, 'model.safetensors');
  if (existsSync(single)) return readSafetensors(single, include);
  const indexFile = join(dir, 'model.safetensors.index.json');
  if (!existsSync(indexFile)) {
    const hint = existsSync(join(dir, 'pytorch_model.bin')) ? ' (pytorch_model.bin is not supported; re-save with safe_serialization=True)' : '';
    throw new Error(`${dir}: no model.safetensors or model.safetensors.index.json${hint}`);
  }
  let weightMap: Record<string, string>;
  try {
    weightMap = (JSON.parse(readFileSync(indexFile, 'utf8')) as { weight_map: Record<string, string> }).weight_map;
  } catch (e) {
    throw new Error(`${indexFile}: not valid JSON (${(e as Error).message})`);
  }
  if (!weightMap || typeof weightMap !== 'object') throw new Error(`${indexFile}: no "weight_map" object`);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(weightMap)) {
    if (include && !include(name)) continue;
    if (!byShard.has(shard)) byShard.set(shard, []);
    byShard.get(shard)!.push(name);
  }
  const out = new Map<string, HostTensor>();
  for (const [shard, names] of byShard) {
    const shardFile = join(dir, shard);
    if (!existsSync(shardFile)) throw new Error(`${indexFile}: shard ${shard} is listed but ${shardFile} does not exist`);
    const wanted = new Set(names);
    const tensors = readSafetensors(shardFile, (n) => wanted.has(n));
    for (const name of names) {
      const t = tensors.get(name);
      if (!t) throw new Error(`${indexFile}: tensor "${name}" is mapped to ${shard} but that shard does not contain it`);
      out.set(name, t);
    }
  }
  return out;
}

/** Writes a Hugging Face weights file (dir/model.safetensors, metadata {format: "pt"} as transformers writes it). */
export function saveHfWeights(dir: string, tensors: Map<string, HostTensor>): void {
  writeSafetensors(join(dir, 'model.safetensors'), tensors, { format: 'pt' });
}
