/** Chunks of bytes (e.g. from a streaming inflater) as one array of `total` bytes: the chunk itself,
 * not a copy, when it is the only one with bytes. */
export function concatBytes(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const full = chunks.filter((c) => c.length > 0);
  if (full.length === 1) return full[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
