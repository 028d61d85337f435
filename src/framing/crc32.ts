/** The CRC-32 table (IEEE 802.3, reflected polynomial 0xEDB88320), built once. */
const table = /* @__PURE__ */ (() => {
  const entries = new Uint32Array(256);
  for (let index = 0; index < 256; index++) {
    let value = index;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    entries[index] = value >>> 0;
  }
  return entries;
})();

/**
 * CRC-32 (IEEE, as in zlib, gzip and the AWS event stream) of `bytes[start, end)`, continuing from `previous` (the CRC of
 * the bytes before, default none). Hand-written, a table lookup per byte: the stream decoders run it over every byte an
 * upstream sends, and it must run in the Worker bundle without a dependency.
 *
 * @example
 * crc32(new TextEncoder().encode('123456789')); // 0xcbf43926
 */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, previous = 0): number {
  let crc = ~previous >>> 0;
  for (let index = start; index < end; index++) crc = table[(crc ^ bytes[index]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
