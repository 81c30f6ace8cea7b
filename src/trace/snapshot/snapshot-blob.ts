// A snapshot file read as a stream (a File in the page's workers): a pickle, gzip-compressed or not, is
// parsed as its bytes arrive and never held whole, so a 1 GB snapshot costs what is read from it (its
// trace as columns), not another gigabyte of file. (The CLI reads a file whole: Node's zlib in one call
// is faster there than its DecompressionStream, and a process holds only one file.) What this way cannot read
// (JSON, a damaged gzip, something else) goes through decodeSnapshotForReplay on the whole file, whose
// outcome and messages are then the ones given.
import { concatBytes } from '../../lib/concat-bytes';
import { believable, isize } from '../../lib/gzip-trailer';
import { ImportError } from '../../lib/import-error';
import { PickleChunkReader } from '../pickle/pickle-chunks';
import type { PickleValue } from '../pickle/pickle-value';
import { formatBytes, isGzip, tooLarge } from './gunzip';
import { SNAPSHOT_WORDS } from './snapshot';
import { checkSnapshot, type SnapshotForReplay } from './snapshot-checks';
import { DEFAULT_MAX_SNAPSHOT_BYTES, decodeSnapshotForReplay, looksLikePickle, type DecodeSnapshotOptions } from './snapshot-file';
import { TraceRows } from './trace-rows';

/** Bytes of the file read at a time, and how many such reads are under way at once. */
const SLICE_BYTES = 16 << 20;
const SLICES_AHEAD = 2;

/** Bytes of the inflated start that tell a pickle from anything else. */
const HEAD_BYTES = 1024;

/** A snapshot's size where nothing tells it: only sizes the trace's first columns (they grow). */
const UNKNOWN_SIZE_RATIO = 10;

async function bytesOf(blob: Blob): Promise<Uint8Array> {
  return new Uint8Array(await blob.arrayBuffer());
}

/**
 * decodeSnapshotForReplay of a Blob's bytes, reading them as a stream (above). `options.gunzip` is not
 * used: gzip is inflated by the platform's DecompressionStream as the bytes arrive.
 */
export async function decodeSnapshotBlob(blob: Blob, options: DecodeSnapshotOptions = {}): Promise<SnapshotForReplay> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  const progress = options.onProgress ?? ((): void => {});
  const whole = async (): Promise<SnapshotForReplay> => decodeSnapshotForReplay(await bytesOf(blob), options);
  const gz = isGzip(await bytesOf(blob.slice(0, 2)));
  if (gz && typeof DecompressionStream === 'undefined') return whole();
  if (!gz && blob.size > maxBytes) throw tooLarge(`it is ${formatBytes(blob.size)}`, maxBytes);
  progress(0);

  // How much of the file has been read, for progress, and the inflated bytes so far, for the bound.
  let read = 0;
  let inflated = 0;
  // The file in large slices, two read ahead while the last is parsed: Blob.stream()'s chunks of
  // 64 KiB each cost the browser a round trip (a 1 GB file read 60% slower that way), and with one
  // slice in flight the parse waited on the browser's reads (1 GB parsed in 3.8-6.2 s, 3 runs; with
  // two, 3.6-3.9 s; 320 MB, 5 runs each: 1.32-1.44 s, with two 1.23-1.36).
  const ahead: Promise<Uint8Array>[] = [];
  let asked = 0;
  const counted = new ReadableStream<Uint8Array>({
    async pull(out) {
      while (ahead.length < SLICES_AHEAD && asked < blob.size) {
        const slice = bytesOf(blob.slice(asked, asked + SLICE_BYTES));
        slice.catch(() => {}); // a read after the stream was given up must not be an unhandled rejection
        ahead.push(slice);
        asked += SLICE_BYTES;
      }
      const slice = ahead.shift();
      if (!slice) return out.close();
      const bytes = await slice;
      read += bytes.length;
      out.enqueue(bytes);
    },
    cancel() {
      ahead.length = 0;
    },
  });
  const stream = gz ? counted.pipeThrough(new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>) : counted;
  const reader = stream.getReader();
  /** The next bytes; null at the end; 'damaged' where inflating failed (whole() then names it). */
  const next = async (): Promise<Uint8Array | null | 'damaged'> => {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      return 'damaged';
    }
    if (chunk.done) return null;
    inflated += chunk.value.length;
    if (gz && inflated > maxBytes) throw tooLarge(`it decompresses to more than ${formatBytes(maxBytes)}`, maxBytes);
    return chunk.value;
  };
  const giveUp = async (): Promise<SnapshotForReplay> => {
    void reader.cancel().catch(() => {});
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

  const size = gz ? (believable(await trailerClaim(blob), blob.size, maxBytes) ?? blob.size * UNKNOWN_SIZE_RATIO) : blob.size;
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
      progress((0.97 * read) / blob.size);
    }
    value = pickle.end();
  } catch (e) {
    // The pickle's own damage is reported where the whole-file read reports it; a file the fast
    // path cannot vouch for is read the generic way.
    if (e instanceof ImportError) {
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

/** The size a gzip file's trailer claims (mod 2^32), null when too short to have one. */
async function trailerClaim(blob: Blob): Promise<number | null> {
  return blob.size < 18 ? null : isize(await bytesOf(blob.slice(blob.size - 4)));
}
