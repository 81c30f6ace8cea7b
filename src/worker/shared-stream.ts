// A request stream in shared memory, where the page is cross-origin isolated (the servers send
// COOP/COEP, so SharedArrayBuffer exists): the page, the sweep workers and the replay worker then read
// one copy. Otherwise each thread a stream is posted to gets a copy (a structured clone): on a 1 GB
// snapshot ~250 MB each for the page and every sweep worker.
import { sharedColumns } from '../lib/columns';
import { REQUEST_COLUMNS, type RequestStream } from '../trace/stream/request-stream';

/** Whether this thread can share memory with the others (a page served with COOP and COEP). */
export function canShare(): boolean {
  return typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true;
}

/** `stream` with its columns in shared memory (itself where they are already, or memory is not shared). */
export function sharedStream(stream: RequestStream): RequestStream {
  return !canShare() || isShared(stream) ? stream : { ...stream, ...sharedColumns(stream, REQUEST_COLUMNS) };
}

/** Whether posting `stream` to another thread shares its columns rather than copying them. */
export function isShared(stream: RequestStream): boolean {
  return stream.kind.buffer instanceof (globalThis.SharedArrayBuffer ?? class {});
}
