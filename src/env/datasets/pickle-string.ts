// Reads a Python pickle whose whole content is one str. LiveCodeBench stores private test cases as
// base64(zlib(pickle.dumps(json_string))); this is the only pickle shape we accept: anything else
// (objects, code) is refused, so no pickle opcode can make us do more than copy bytes.

/** The string a pickle holds; throws on any other opcode. */
export function readPickledString(bytes: Uint8Array): string {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  let value: string | null = null;
  const need = (n: number): void => {
    if (i + n > view.length) throw new Error('truncated pickle');
  };
  for (;;) {
    need(1);
    const op = view[i++]!;
    switch (op) {
      case 0x80: // PROTO n
        need(1);
        i += 1;
        break;
      case 0x95: // FRAME (8-byte length)
        need(8);
        i += 8;
        break;
      case 0x94: // MEMOIZE
        break;
      case 0x8c: {
        // SHORT_BINUNICODE
        need(1);
        const n = view[i++]!;
        need(n);
        value = view.toString('utf8', i, i + n);
        i += n;
        break;
      }
      case 0x58: {
        // BINUNICODE (4-byte little-endian length)
        need(4);
        const n = view.readUInt32LE(i);
        i += 4;
        need(n);
        value = view.toString('utf8', i, i + n);
        i += n;
        break;
      }
      case 0x8d: {
        // BINUNICODE8
        need(8);
        const n = Number(view.readBigUInt64LE(i));
        i += 8;
        need(n);
        value = view.toString('utf8', i, i + n);
        i += n;
        break;
      }
      case 0x2e: // STOP
        if (value === null) throw new Error('pickle holds no string');
        return value;
      default:
        throw new Error(`unsupported pickle opcode 0x${op.toString(16)} (only a pickled str is accepted)`);
    }
  }
}
