// predict's recordings decoded side by side: each but the first on a worker thread of its own while the
// main thread decodes the first. Decoding (the pickle's parse, the request stream, the stacks) is most
// of a predict's time, and each recording's is its own. What crosses back is plain data: the request
// stream's columns, the stacks' keys and frame lists, the recorded allocator settings.
import { fileURLToPath } from 'node:url';
import { parentPort, Worker } from 'node:worker_threads';
import { ImportError, type ImportErrorCode } from '../lib/import-error';
import { isGzip } from '../lib/gzip-frame';
import { allocationStacks, type StackKeys } from '../trace/measures/allocation-stacks';
import { planSnapshotReplay } from '../trace/replay/replay-snapshot';
import type { AllocatorSettings } from '../trace/snapshot/snapshot';
import { decodeSnapshotForReplay, type SnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { decodeSnapshotStream } from '../trace/snapshot/snapshot-stream';
import type { RequestStream } from '../trace/stream/request-stream';
import { UsageError } from './cli-format';
import { inflatingStream } from './inflating-stream';
import { nodeGunzip } from './node-gunzip';
import { readBytes } from './read-file';

/** A recording as a prediction takes it. */
export interface PlannedRecording {
  stream: RequestStream;
  stacks: StackKeys;
  settings: AllocatorSettings | undefined;
}

export function plannedRecording({ snapshot, traces }: SnapshotForReplay): PlannedRecording {
  const trace = traces[0];
  const { stream } = planSnapshotReplay(snapshot, trace ? { trace } : {});
  const { keyOf, lists } = allocationStacks(stream, trace?.details, snapshot);
  return { stream, stacks: { keyOf, lists }, settings: snapshot.allocator_settings };
}

type Reply = { ok: PlannedRecording } | { error: { usage: boolean; code?: ImportErrorCode; message: string; offset?: number } };

/** `files`' recordings: the first decoded here by `loadHere` (which may have begun reading it), the others
 * on worker threads. A file that cannot be decoded is named in the error. */
export async function decodeSideBySide(files: readonly string[], loadHere: (file: string) => Promise<SnapshotForReplay>): Promise<PlannedRecording[]> {
  // Started first, so that they parse while this thread does the first.
  const workers = files.slice(1).map((file) => {
    const worker = new Worker(fileURLToPath(new URL('./splitscope.mjs', import.meta.url)), { argv: ['recording-worker'] });
    const decoded = new Promise<PlannedRecording>((done, fail) => {
      worker.once('message', (reply: Reply) => {
        void worker.terminate();
        if ('ok' in reply) return done(reply.ok);
        const e = reply.error;
        fail(e.usage ? new UsageError(e.message) : e.code ? new ImportError(e.code, `${file}: ${e.message}`, e.offset) : new Error(e.message));
      });
      worker.once('error', fail);
    });
    // Awaited only once the first is decoded: a failure before then is not unhandled.
    decoded.catch(() => {});
    worker.postMessage(file);
    return { worker, decoded };
  });
  let first: PlannedRecording;
  try {
    first = plannedRecording(await loadHere(files[0]!));
  } catch (e) {
    for (const w of workers) void w.worker.terminate();
    throw e instanceof ImportError ? new ImportError(e.code, `${files[0]}: ${e.message}`, e.offset) : e;
  }
  return [first, ...(await Promise.all(workers.map((w) => w.decoded)))];
}

/** A recording worker thread: a file's path in, its PlannedRecording (or the error) out. */
export function recordingWorker(): Promise<number> {
  return new Promise(() => {
    parentPort!.once('message', (file: string) => {
      void decode(file).then(
        (ok) => parentPort!.postMessage({ ok } satisfies Reply),
        (e: Error) =>
          parentPort!.postMessage({
            error: { usage: e instanceof UsageError, message: e.message, ...(e instanceof ImportError ? { code: e.code, ...(e.offset !== undefined ? { offset: e.offset } : {}) } : {}) },
          } satisfies Reply),
      );
    });
  });
}

async function decode(file: string): Promise<PlannedRecording> {
  const bytes = readBytes(file);
  const options = { gunzip: nodeGunzip, details: true };
  return plannedRecording(isGzip(bytes) ? await decodeSnapshotStream(inflatingStream(bytes), options) : decodeSnapshotForReplay(bytes, options));
}
