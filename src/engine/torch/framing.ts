// Messages between the controller and the torch worker (engines/torch/marft_torch/framing.py):
// a 4-byte big-endian body length, then a msgpack body. Float arrays travel as msgpack bin holding
// raw little-endian float32 values, so they round-trip bit for bit (NaN payloads, −0, subnormals).
import { decode, encode } from '@msgpack/msgpack';
import { endianness } from 'node:os';

const MAX_FRAME = 2 ** 32 - 1;

if (endianness() !== 'LE') throw new Error('the torch engine client needs a little-endian host (float arrays travel as raw little-endian bytes)');

/** One frame: length header + msgpack body. */
export function encodeFrame(message: unknown): Uint8Array {
  const body = encode(message);
  if (body.length > MAX_FRAME) throw new Error(`message of ${body.length} bytes exceeds the 4 GiB frame limit`);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, false);
  out.set(body, 4);
  return out;
}

/** Splits a byte stream into frame bodies, however the stream was chunked. */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;

  /** Adds bytes; returns every message completed by them, decoded. */
  push(chunk: Uint8Array): unknown[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: unknown[] = [];
    for (;;) {
      if (this.buffered < 4) return out;
      const head = this.peek(4);
      const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, false);
      if (this.buffered < 4 + length) return out;
      const frame = this.take(4 + length);
      out.push(decode(frame.subarray(4)));
    }
  }

  private peek(n: number): Uint8Array {
    if (this.chunks[0]!.length < n) this.chunks = [concat(this.chunks, this.buffered)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Uint8Array {
    const all = this.chunks.length === 1 ? this.chunks[0]! : concat(this.chunks, this.buffered);
    const frame = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return frame;
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) { out.set(c, o); o += c.length; }
  return out;
}

/** The bytes of a float array for a message (a view, not a copy). */
export function f32Bytes(a: Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A float array from message bytes (copied, so it is aligned and owns its memory). */
export function bytesF32(b: unknown, what = 'float array'): Float32Array {
  if (!(b instanceof Uint8Array) || b.byteLength % 4 !== 0) throw new Error(`torch worker: ${what} is not float32 bytes`);
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}
