// A snapshot File read as a stream in the page's workers (snapshot-stream.ts parses it as it comes):
// large slices read ahead, gzip inflated by the platform's DecompressionStream. A 1 GB snapshot then
// costs what is read from it (its trace as columns), not another gigabyte of file.
import { isGzip, isize } from '../../lib/gzip-frame';
import { formatBytes, tooLarge } from './gunzip';
import type { SnapshotForReplay } from './snapshot-checks';
import { DEFAULT_MAX_SNAPSHOT_BYTES, decodeSnapshotForReplay, type DecodeSnapshotOptions } from './snapshot-file';
import { decodeSnapshotStream } from './snapshot-stream';

/** Bytes of the file read at a time, and how many such reads are under way at once. */
const SLICE_BYTES = 16 << 20;
const SLICES_AHEAD = 2;

async function bytesOf(blob: Blob): Promise<Uint8Array> {
  return new Uint8Array(await blob.arrayBuffer());
}

/**
 * decodeSnapshotForReplay of a Blob's bytes, reading them as a stream (above). gzip is inflated by the
 * platform's DecompressionStream as the bytes arrive; `options.gunzip` serves only the whole-file read
 * that a file this way cannot read falls back to.
 */
export async function decodeSnapshotBlob(blob: Blob, options: DecodeSnapshotOptions = {}): Promise<SnapshotForReplay> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  const gz = isGzip(await bytesOf(blob.slice(0, 2)));
  if (gz && typeof DecompressionStream === 'undefined') return decodeSnapshotForReplay(await bytesOf(blob), options);
  if (!gz && blob.size > maxBytes) throw tooLarge(`it is ${formatBytes(blob.size)}`, maxBytes);

  // How much of the file has been read, for progress.
  let read = 0;
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
  return decodeSnapshotStream(
    {
      gz,
      async next() {
        try {
          const chunk = await reader.read();
          return chunk.done ? null : chunk.value;
        } catch {
          return 'damaged';
        }
      },
      fileSize: blob.size,
      claimedSize: async () => (blob.size < 18 ? null : isize(await bytesOf(blob.slice(blob.size - 4)))),
      read: () => read / blob.size,
      cancel: () => void reader.cancel().catch(() => {}),
      whole: () => bytesOf(blob),
    },
    options,
  );
}
