// A gzip snapshot inflated by Node's zlib on its thread pool while the CLI parses what has arrived
// (trace/snapshot/snapshot-stream.ts): inflating and parsing overlap, where gunzipSync and then the
// parse ran one after the other. Started before the rest of the CLI loads (early-read.ts), it
// inflates while that loads too.
import { createGunzip } from 'node:zlib';
import { gzipClaimedSize } from '../lib/gzip-frame';
import type { SnapshotByteStream } from '../trace/snapshot/snapshot-stream';

/** Inflated bytes per chunk: one window of the chunked pickle reader (smaller chunks are copied into one). */
const CHUNK_BYTES = 8 << 20;
/** Inflated bytes held ready for the parse at most: past that the inflater waits (a gzip bomb fills no memory). */
const AHEAD_BYTES = 64 << 20;

/** `gz`'s bytes, inflating from now on; `gz` is the whole file. */
export function inflatingStream(gz: Uint8Array): SnapshotByteStream {
  const z = createGunzip({ chunkSize: CHUNK_BYTES });
  const ready: Uint8Array[] = [];
  let readyBytes = 0;
  let ended = false;
  let damaged = false;
  let wake: (() => void) | null = null;
  const woken = (): void => {
    wake?.();
    wake = null;
  };
  z.on('data', (chunk: Buffer) => {
    ready.push(chunk);
    readyBytes += chunk.byteLength;
    if (readyBytes >= AHEAD_BYTES) z.pause();
    woken();
  });
  z.on('end', () => {
    ended = true;
    woken();
  });
  z.on('error', () => {
    damaged = true;
    woken();
  });
  z.end(gz);
  return {
    gz: true,
    fileSize: gz.length,
    async next() {
      while (ready.length === 0 && !ended && !damaged) await new Promise<void>((resolve) => (wake = resolve));
      const chunk = ready.shift();
      if (!chunk) return damaged ? 'damaged' : null;
      readyBytes -= chunk.byteLength;
      if (readyBytes < AHEAD_BYTES) z.resume();
      return chunk;
    },
    claimedSize: async () => gzipClaimedSize(gz),
    read: () => z.bytesWritten / gz.length,
    cancel: () => {
      // A read waiting now, or asked for later, ends instead of waiting on an inflater that is gone.
      ended = true;
      ready.length = 0;
      z.destroy();
      woken();
    },
    whole: async () => gz,
  };
}
