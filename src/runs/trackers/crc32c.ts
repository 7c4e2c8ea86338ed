// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78), the checksum of TFRecord framing, and its
// "masked" form (TensorFlow's tensorflow/core/lib/hash/crc32c.h: rotate right by 15, add a constant),
// which keeps a CRC stored next to the data it covers from being mistaken for data.

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C of `bytes` (unsigned 32-bit). */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const MASK_DELTA = 0xa282ead8;

/** The masked CRC TFRecord stores: ((crc >>> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return (((crc >>> 15) | (crc << 17)) + MASK_DELTA) >>> 0;
}
