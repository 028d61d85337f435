/**
 * The chunks' bytes, in order, in one array (the one chunk itself when there is only one): how a socket read's many
 * small chunks become one read or one write.
 *
 * @example
 * ```ts
 * concatenateChunks([Uint8Array.of(1, 2), Uint8Array.of(3)]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatenateChunks(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
