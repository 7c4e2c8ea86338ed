// TensorBoard's event-file format, written directly: a file of TFRecords, each one serialised
// `Event` protocol buffer (tensorflow/core/util/event.proto). Only what scalar logging needs is
// encoded: Event { wall_time = 1 (double), step = 2 (int64), file_version = 3 (string),
// summary = 5 (Summary), session_log = 7 (SessionLog) }, Summary { repeated Value value = 1 },
// Summary.Value { tag = 1 (string), simple_value = 2 (float) }, SessionLog { status = 1 (enum) }.
//
// TFRecord framing (tensorflow/core/lib/io/record_writer.cc): uint64 length (little-endian), uint32
// masked CRC-32C of those 8 bytes, the data, uint32 masked CRC-32C of the data.
import { maskedCrc32c } from './crc32c.ts';

/** The first event of every file: the format version TensorBoard checks ("brain.Event:2"). */
export const FILE_VERSION = 'brain.Event:2';

/** SessionLog.SessionStatus.START: TensorBoard drops the events of steps >= this event's step (a restart). */
const SESSION_START = 1;

class ProtoWriter {
  private readonly parts: Uint8Array[] = [];

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
  }

  private varint(value: bigint): void {
    const out: number[] = [];
    let v = BigInt.asUintN(64, value);
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      out.push(byte);
    } while (v > 0n);
    this.push(Uint8Array.from(out));
  }

  private key(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  double(field: number, value: number): this {
    this.key(field, 1);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.push(b);
    return this;
  }

  float(field: number, value: number): this {
    this.key(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.push(b);
    return this;
  }

  /** Proto3 leaves a field at its default (0) out, as TensorFlow's writers do. */
  int64(field: number, value: number): this {
    if (value === 0) return this;
    this.key(field, 0);
    this.varint(BigInt(Math.trunc(value)));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2);
    this.varint(BigInt(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of this.parts) (out.set(p, at), (at += p.length));
    return out;
  }
}

export interface ScalarValue {
  tag: string;
  value: number;
}

/** A serialised Event with the file version (the first record of a file). */
export function fileVersionEvent(wallTime: number): Uint8Array {
  return new ProtoWriter().double(1, wallTime).string(3, FILE_VERSION).finish();
}

/** A serialised Event holding one Summary of scalars at `step`. */
export function scalarsEvent(wallTime: number, step: number, values: readonly ScalarValue[]): Uint8Array {
  const summary = new ProtoWriter();
  for (const v of values) summary.bytes(1, new ProtoWriter().string(1, v.tag).float(2, v.value).finish());
  return new ProtoWriter().double(1, wallTime).int64(2, step).bytes(5, summary.finish()).finish();
}

/** A serialised Event saying the run (re)started at `step`: TensorBoard then discards what it had at steps >= `step`. */
export function sessionStartEvent(wallTime: number, step: number): Uint8Array {
  return new ProtoWriter().double(1, wallTime).int64(2, step).bytes(7, new ProtoWriter().int64(1, SESSION_START).finish()).finish();
}

/** One TFRecord: length, masked CRC of the length, data, masked CRC of the data. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + 4 + data.length + 4);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}
