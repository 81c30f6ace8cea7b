import { gunzipSync } from 'node:zlib';

/** Node's native zlib: several times faster than fflate for the CLI's start-to-exit time. */
export function nodeGunzip(gz: Uint8Array, maxBytes: number): Uint8Array {
  // Inflate into one buffer of the size the gzip trailer claims (when plausible), not 16 KiB
  // chunks concatenated at the end: that copy was a tenth of a 46 MB import. The claim only
  // sizes the buffer; maxOutputLength still bounds the output.
  const n = gz.length;
  const claimed = n >= 18 ? (gz[n - 4]! | (gz[n - 3]! << 8) | (gz[n - 2]! << 16) | (gz[n - 1]! << 24)) >>> 0 : 0;
  // A claim is only believed up to 64:1 and 512 MiB: a lying trailer must not reserve gigabytes.
  const plausible = claimed > 0 && claimed <= n * 64 && claimed < Math.min(maxBytes, 512 * 1024 * 1024);
  return gunzipSync(gz, { maxOutputLength: maxBytes, ...(plausible ? { chunkSize: Math.max(claimed + 1, 1 << 14) } : {}) });
}
