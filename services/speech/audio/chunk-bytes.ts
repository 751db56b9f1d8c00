/** The largest audio message the speech stream carries. */
export const MAX_CHUNK_BYTES = 65536;

/** Splits bytes into views of at most `max` bytes each, without copying. */
export function chunkBytes(bytes: Uint8Array, max = MAX_CHUNK_BYTES): Uint8Array[] {
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`chunk size must be a positive integer, got ${max}`);
  }
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += max) {
    chunks.push(bytes.subarray(offset, offset + max));
  }
  return chunks;
}
