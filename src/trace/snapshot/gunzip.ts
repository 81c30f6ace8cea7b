// gunzip for snapshot files, bounded: a file's claim about its size is never trusted, and
// inflating stops at the limit instead of filling memory (a decompression bomb). fflate runs
// everywhere; a platform inflater (Node's zlib in the CLI) may stand in for speed.
import { Gunzip, gunzipSync } from 'fflate';
import { concatBytes } from '../../lib/concat-bytes';
import { believedGzipSize, gzipClaimedSize } from '../../lib/gzip-frame';
import { ImportError } from '../../lib/import-error';

/** A platform inflater: it must stop at `maxBytes` of output by throwing. */
export type PlatformGunzip = (gz: Uint8Array, maxBytes: number) => Uint8Array;

/**
 * The first `wanted` bytes `gz` inflates to (fewer if it holds fewer), inflating no more than it takes:
 * what a file is can be told from its start before gigabytes are inflated. Damage found this early is
 * left for the full inflate to report.
 */
export function gunzipHead(gz: Uint8Array, wanted: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const inflater = new Gunzip((chunk) => {
    if (total < wanted && chunk.length > 0) chunks.push(chunk);
    total += chunk.length;
  });
  try {
    for (let pos = 0; pos < gz.length && total < wanted; pos += 4096) inflater.push(gz.subarray(pos, Math.min(gz.length, pos + 4096)), false);
  } catch {
    // reported by the full inflate
  }
  return concatBytes(chunks, chunks.reduce((n, c) => n + c.length, 0)).subarray(0, wanted);
}

export function formatBytes(n: number): string {
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/** `what` completes "The snapshot is too large: ...", e.g. "it is 3.1 GiB". */
export function tooLarge(what: string, maxBytes: number): ImportError {
  return new ImportError(
    'too-large',
    `The snapshot is too large: ${what}, over the ${formatBytes(maxBytes)} limit. ` +
      `Record a shorter trace (a smaller max_entries in _record_memory_history) and open that.`,
  );
}

/**
 * Snapshots inflate 5-21:1 (every fixture and reference trace); deflate can reach 1032:1. A gzip that
 * inflates past this many times its size, and past a floor no such ratio matters below, is refused as
 * a decompression bomb, as one past the size limit is, before its memory is spent.
 */
export const MAX_INFLATE_RATIO = 100;
const RATIO_FLOOR_BYTES = 64 * 2 ** 20;

/** The most a gzip of `gzBytes` may inflate to. */
export function inflateLimit(gzBytes: number, maxBytes: number): number {
  return Math.min(maxBytes, Math.max(RATIO_FLOOR_BYTES, gzBytes * MAX_INFLATE_RATIO));
}

/** The error for a gzip of `gzBytes` that inflates past `inflateLimit`. */
export function inflatedTooFar(gzBytes: number, maxBytes: number): ImportError {
  const limit = inflateLimit(gzBytes, maxBytes);
  if (limit >= maxBytes) return tooLarge(`it decompresses to more than ${formatBytes(maxBytes)}`, maxBytes);
  return new ImportError(
    'too-large',
    `The gzip file inflates to more than ${formatBytes(limit)}, over ${MAX_INFLATE_RATIO} times its ${formatBytes(gzBytes)}: ` +
      `memory snapshots compress about 5-20 to 1, so this is a decompression bomb or not a snapshot. Open the file torch.cuda.memory._dump_snapshot wrote.`,
  );
}

function gzipError(e: unknown): ImportError {
  const code = (e as { code?: unknown }).code;
  const what = e instanceof Error ? e.message : String(e);
  if (code === 0) {
    return new ImportError(
      'truncated',
      'The gzip data is truncated: the file was cut off. Re-download or re-compress it.',
    );
  }
  return new ImportError(
    'bad-gzip',
    `The file starts like gzip but its compressed data is damaged (${what}). ` +
      `Re-download it, or open the uncompressed pickle.`,
  );
}

/**
 * gunzip with a bound on the output. The ISIZE trailer (size mod 2^32) is only a claim: when it
 * is plausible, fflate inflates straight into a buffer of that size plus one byte, and a
 * full buffer shows the claim was false. Otherwise, or then, the data is inflated in slices
 * small enough that the output cannot pass the limit by more than about a MiB before the
 * running total stops it (deflate expands at most 1032:1).
 */
export function gunzipBounded(gz: Uint8Array, maxBytes: number, progress: (f: number) => void): Uint8Array {
  const n = gz.length;
  if (gzipClaimedSize(gz) === null) throw gzipError(Object.assign(new Error('too short'), { code: 0 }));
  const claimed = believedGzipSize(gz, maxBytes);
  // A claim is not proof: a cut-off file ends in compressed bytes, not a trailer.
  if (claimed !== null) {
    let out: Uint8Array | undefined;
    try {
      out = gunzipSync(gz, { out: new Uint8Array(claimed + 1) });
    } catch {
      out = undefined; // the sliced path below reports the error precisely
    }
    if (out !== undefined && out.length === claimed) return out;
  }

  const chunks: Uint8Array[] = [];
  let total = 0;
  const inflater = new Gunzip((chunk) => {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(`it decompresses to more than ${formatBytes(maxBytes)}`, maxBytes);
    if (chunk.length > 0) chunks.push(chunk);
  });
  try {
    let pos = 0;
    while (pos < n) {
      const room = maxBytes - total;
      const step = Math.max(1024, Math.min(1 << 20, Math.floor(room / 1032)));
      const end = Math.min(n, pos + step);
      inflater.push(gz.subarray(pos, end), end === n);
      pos = end;
      progress(pos / n);
    }
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw gzipError(e);
  }
  return concatBytes(chunks, total);
}

export function platformGunzip(gunzip: PlatformGunzip, gz: Uint8Array, maxBytes: number): Uint8Array {
  try {
    return gunzip(gz, maxBytes);
  } catch (e) {
    if (e instanceof ImportError) throw e;
    if (e instanceof RangeError || /ERR_BUFFER_TOO_LARGE/.test(String((e as { code?: unknown }).code))) {
      throw tooLarge(`it decompresses to more than ${formatBytes(maxBytes)}`, maxBytes);
    }
    // Name the damage the way the portable path does (truncation included).
    return gunzipBounded(gz, maxBytes, () => {});
  }
}
