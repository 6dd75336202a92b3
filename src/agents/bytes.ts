/** Byte arrays joined into one, up to a size. */

/** The parts' bytes in order in one new array, cut at `limit` bytes. */
export function joinBytes(parts: readonly Uint8Array[], limit = Infinity): Uint8Array {
  const size = Math.min(limit, parts.reduce((sum, p) => sum + p.length, 0));
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    if (offset >= size) break;
    const piece = part.subarray(0, size - offset);
    out.set(piece, offset);
    offset += piece.length;
  }
  return out;
}
