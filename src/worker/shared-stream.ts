// A request stream in shared memory, where the page is cross-origin isolated (the servers send
// COOP/COEP, so SharedArrayBuffer exists): the page, the sweep workers and the replay worker then read
// one copy. Otherwise each thread a stream is posted to gets a copy (a structured clone): on a 1 GB
// snapshot ~250 MB each for the page and every sweep worker.
import type { RequestStream } from '../trace/stream/request-stream';

type Column = Uint8Array | Int32Array | Float64Array;

/** The stream's typed columns, the arrays a replay reads per request. */
const COLUMNS = ['kind', 'id', 'size', 'stream', 'source', 'input', 'pool'] as const;

/** Whether this thread can share memory with the others (a page served with COOP and COEP). */
export function canShare(): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true;
}

function sharedCopy<T extends Column>(a: T): T {
  const ctor = a.constructor as new (buffer: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}

/** `stream` with its columns in shared memory (itself where they are already, or memory is not shared). */
export function sharedStream(stream: RequestStream): RequestStream {
  if (!canShare() || isShared(stream)) return stream;
  const out = { ...stream };
  for (const key of COLUMNS) (out as unknown as Record<string, Column>)[key] = sharedCopy(stream[key]);
  return out;
}

/** Whether posting `stream` to another thread shares its columns rather than copying them. */
export function isShared(stream: RequestStream): boolean {
  return stream.kind.buffer instanceof (globalThis.SharedArrayBuffer ?? class {});
}
