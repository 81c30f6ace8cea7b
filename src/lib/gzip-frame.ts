// What a gzip stream's frame says: the magic that starts it, and the size it inflates to (its ISIZE
// trailer: the size mod 2^32) and whether to believe it. A claim only sizes an output buffer up front;
// the inflater still bounds the output, so a claim that lies costs at most a buffer of the size believed.

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Deflate expands data at most about 1032:1; snapshots compress 5-15:1. Claims past this are refused. */
const MAX_BELIEVED_RATIO = 64;

/** The ISIZE trailer of `gz`, or null when it is too short to have one. */
export function gzipClaimedSize(gz: Uint8Array): number | null {
  return gz.length < 18 ? null : isize(gz.subarray(gz.length - 4));
}

/** The size a gzip stream's last four bytes (its ISIZE trailer) claim. */
export function isize(t: Uint8Array): number {
  return (t[0]! | (t[1]! << 8) | (t[2]! << 16) | (t[3]! << 24)) >>> 0;
}

/** The claimed size when it is plausible for `gz` and within `maxBytes`, else null. */
export function believedGzipSize(gz: Uint8Array, maxBytes: number): number | null {
  return believable(gzipClaimedSize(gz), gz.length, maxBytes);
}

/** A claim of `claimed` bytes for a gzip stream of `gzBytes`, when plausible and within `maxBytes`, else null. */
export function believable(claimed: number | null, gzBytes: number, maxBytes: number): number | null {
  return claimed !== null && claimed > 0 && claimed <= maxBytes && claimed <= gzBytes * MAX_BELIEVED_RATIO ? claimed : null;
}
