// A snapshot file parsed as its bytes arrive (a File read in slices in the page's workers, a zlib
// stream in the CLI): a pickle, gzip-compressed or not, is never held whole once inflated, and its
// parse overlaps the reading and inflating. What this way cannot read (JSON, a damaged gzip,
// something else) goes through decodeSnapshotForReplay on the whole file, whose outcome and messages
// are then the ones given.
import { concatBytes } from '../../lib/concat-bytes';
import { believable } from '../../lib/gzip-frame';
import { ImportError } from '../../lib/import-error';
import { PickleChunkReader } from '../pickle/pickle-chunks';
import type { PickleValue } from '../pickle/pickle-value';
import { inflatedTooFar, inflateLimit } from './gunzip';
import { SNAPSHOT_WORDS } from './snapshot';
import { checkSnapshot, type SnapshotForReplay } from './snapshot-checks';
import { DEFAULT_MAX_SNAPSHOT_BYTES, decodeSnapshotForReplay, looksLikePickle, type DecodeSnapshotOptions } from './snapshot-file';
import { TraceRows } from './trace-rows';

/** A snapshot file's bytes as they arrive, inflated where the file is gzip-compressed. */
export interface SnapshotByteStream {
  gz: boolean;
  /** The next bytes; null at the end; 'damaged' where inflating failed (whole() then names it). */
  next(): Promise<Uint8Array | null | 'damaged'>;
  /** The file's size in bytes. */
  fileSize: number;
  /** What a gzip file's trailer claims it inflates to (mod 2^32), null if it is too short to have one. */
  claimedSize(): Promise<number | null>;
  /** The fraction of the file read so far, for progress. */
  read(): number;
  /** The rest is not wanted. */
  cancel(): void;
  /** The whole file, for decodeSnapshotForReplay. */
  whole(): Promise<Uint8Array>;
}

/** Bytes of the inflated start that tell a pickle from anything else. */
const HEAD_BYTES = 1024;

/** A gzip snapshot's size where nothing tells it, as a multiple of the file's size. */
const UNKNOWN_SIZE_RATIO = 10;

/** decodeSnapshotForReplay of the bytes `source` gives, parsed as they arrive (above). */
export async function decodeSnapshotStream(source: SnapshotByteStream, options: DecodeSnapshotOptions = {}): Promise<SnapshotForReplay> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  const progress = options.onProgress ?? ((): void => {});
  const gz = source.gz;
  progress(0);

  // The inflated bytes so far, for the bound.
  let inflated = 0;
  const next = async (): Promise<Uint8Array | null | 'damaged'> => {
    const chunk = await source.next();
    if (chunk === null || chunk === 'damaged') return chunk;
    inflated += chunk.length;
    if (gz && inflated > inflateLimit(source.fileSize, maxBytes)) {
      source.cancel();
      throw inflatedTooFar(source.fileSize, maxBytes);
    }
    return chunk;
  };
  const whole = async (): Promise<SnapshotForReplay> => decodeSnapshotForReplay(await source.whole(), options);
  const giveUp = async (): Promise<SnapshotForReplay> => {
    source.cancel();
    return whole();
  };

  // Its first kilobyte says whether it is a pickle.
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < HEAD_BYTES) {
    const chunk = await next();
    if (chunk === 'damaged') return giveUp();
    if (chunk === null) {
      ended = true;
      break;
    }
    head.push(chunk);
    headBytes += chunk.length;
  }
  if (headBytes === 0 || !looksLikePickle(concatBytes(head, headBytes))) return giveUp();

  // The pickle's size, for gzip as far as it can be told: it sizes the trace's first columns (they grow).
  const size = gz ? (believable(await source.claimedSize(), source.fileSize, maxBytes) ?? source.fileSize * UNKNOWN_SIZE_RATIO) : source.fileSize;
  const rows = new TraceRows(size, options.details ?? false);
  const pickle = new PickleChunkReader(gz ? 0 : size, { intern: SNAPSHOT_WORDS, fastPath: rows });
  let value: PickleValue;
  try {
    for (const chunk of head) pickle.push(chunk);
    while (!ended) {
      const chunk = await next();
      if (chunk === 'damaged') return giveUp();
      if (chunk === null) break;
      pickle.push(chunk);
      progress(0.97 * source.read());
    }
    value = pickle.end();
  } catch (e) {
    // The pickle's own damage is reported where the whole-file read reports it; a file the fast
    // path cannot vouch for is read the generic way.
    if (e instanceof ImportError) {
      // Past the inflate bound already: that is what the file is told (the source is cancelled).
      if (e.code === 'too-large') throw e;
      // Inflated whole first, a file says first that it is too large or its gzip damaged.
      for (let chunk = gz ? await next() : null; chunk !== null; chunk = await next()) if (chunk === 'damaged') return giveUp();
      throw e;
    }
    return giveUp();
  }
  try {
    const snapshot = checkSnapshot(value, rows);
    progress(1);
    return snapshot;
  } catch {
    return whole(); // as decodeSnapshotForReplay does: its generic checks word the message
  }
}
