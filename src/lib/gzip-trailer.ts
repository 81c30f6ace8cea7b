// The size a gzip stream says it inflates to (its ISIZE trailer: the size mod 2^32), and whether to
// believe it. A claim only sizes an output buffer up front; the inflater still bounds the output, so
// a claim that lies costs at most a buffer of the size believed.

/** Deflate expands data at most about 1032:1; snapshots compress 5-15:1. Claims past this are refused. */
const MAX_BELIEVED_RATIO = 64;

/** The ISIZE trailer of `gz`, or null when it is too short to have one. */
export function gzipClaimedSize(gz: Uint8Array): number | null {
  const n = gz.length;
  if (n < 18) return null;
  return (gz[n - 4]! | (gz[n - 3]! << 8) | (gz[n - 2]! << 16) | (gz[n - 1]! << 24)) >>> 0;
}

/** The claimed size when it is plausible for `gz` and within `maxBytes`, else null. */
export function believedGzipSize(gz: Uint8Array, maxBytes: number): number | null {
  const claimed = gzipClaimedSize(gz);
  return claimed !== null && claimed > 0 && claimed <= maxBytes && claimed <= gz.length * MAX_BELIEVED_RATIO ? claimed : null;
}
