// Snapshot files in and out: bytes (gzip or not; pickle or JSON) -> a checked Snapshot
// (snapshot-checks.ts), and back. Runs unchanged in Node, a Web Worker and the page, so gzip goes
// through fflate unless the caller brings a faster inflater (gunzip.ts).
import { ImportError } from '../../lib/import-error';
import { readPickle, type ReadPickleOptions } from '../pickle/pickle-reader';
import { tuple, unsharedItems, writePickle, type PickleWritable } from '../pickle/pickle-writer';
import { isGzip } from '../../lib/gzip-frame';
import { formatBytes, gunzipBounded, gunzipHead, inflatedTooFar, inflateLimit, platformGunzip, tooLarge, type PlatformGunzip } from './gunzip';
import { SNAPSHOT_WORDS, type Snapshot, type TraceEntry } from './snapshot';
import { checkSnapshot, NOT_A_SNAPSHOT, type SnapshotForReplay } from './snapshot-checks';
import { traceColumnsFromEntries } from './trace-columns';
import { TraceRows } from './trace-rows';

export type { SnapshotForReplay } from './snapshot-checks';
export { toSnapshot } from './snapshot-checks';

export interface DecodeSnapshotOptions {
  /** Called with 0..1 as the file is decompressed, parsed and checked. */
  onProgress?: (fraction: number) => void;
  /** Largest (decompressed) input accepted, in bytes. Default 2 GiB. */
  maxBytes?: number;
  /**
   * A faster platform inflater (Node's zlib in the CLI) used instead of fflate. It must stop at
   * `maxBytes` of output by throwing; any error it throws is reported as damaged or too large data.
   */
  gunzip?: PlatformGunzip;
  /** decodeSnapshotForReplay: keep each entry's time and stack frames too (TraceColumns.details), for views and exports. */
  details?: boolean;
}

export type SnapshotFormat = 'pickle' | 'json';

export const DEFAULT_MAX_SNAPSHOT_BYTES = 2 * 1024 ** 3;

// ---------------------------------------------------------------- bytes -> value

function firstNonSpace(b: Uint8Array): number {
  let i = 0;
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3; // UTF-8 byte order mark
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i < b.length ? b[i]! : -1;
}

/**
 * 0x80 opens protocol 2+; a protocol 0/1 pickle of a dict or list opens with '(' '}' or ']';
 * one that opens with GLOBAL ('c' module newline name newline) goes to the reader too, so
 * the user hears that it would run code. None of these can start JSON.
 */
export function looksLikePickle(b: Uint8Array): boolean {
  const first = b.length > 0 ? b[0]! : -1;
  if (first === 0x80 || first === 0x28 || first === 0x7d || first === 0x5d) return true;
  if (first !== 0x63) return false;
  const head = String.fromCharCode(...b.subarray(0, 256));
  return /^c[\w.]+\n[\w.]+\n/.test(head);
}

/** JSON of a snapshot opens with '{' (a dict) or '[' (memory_snapshot()'s list), after any spaces. */
function looksLikeJson(b: Uint8Array): boolean {
  const c = firstNonSpace(b);
  return c === 0x7b || c === 0x5b || (c === -1 && b.length > 0);
}

function parseJson(data: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8').decode(data);
  } catch {
    throw new ImportError(
      'too-large',
      `The JSON file is too large to read (${formatBytes(data.length)}): JavaScript strings ` +
        `stop at about 512 MiB. Open the snapshot's pickle instead.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ImportError(
      'bad-json',
      `The file looks like JSON but does not parse (${e instanceof Error ? e.message : e}). ` +
        `Re-export it, or open the original pickle.`,
    );
  }
}

/**
 * Reads a snapshot file: a pickle from torch.cuda.memory._dump_snapshot (any protocol),
 * or the same structure as JSON, either one gzip-compressed or not.
 * Throws ImportError with a message for the user when the file is not one.
 */
export function decodeSnapshotFile(bytes: Uint8Array, options: DecodeSnapshotOptions = {}): Snapshot {
  return decode(bytes, options, false).snapshot;
}


/**
 * decodeSnapshotFile for a replay that needs no stack frames or times (the CLI's replay and sweep):
 * trace entries go straight into columns, which is several times faster and lighter on memory
 * for large traces. The same files are accepted and refused, with the same messages.
 */
export function decodeSnapshotForReplay(bytes: Uint8Array, options: DecodeSnapshotOptions = {}): SnapshotForReplay {
  return decode(bytes, options, true);
}

function decode(bytes: Uint8Array, options: DecodeSnapshotOptions, asColumns: boolean): SnapshotForReplay {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES;
  const report = options.onProgress;
  const progress = report ?? ((): void => {});
  progress(0);

  let data = bytes;
  let start = 0; // where parsing begins on the overall 0..1 scale
  if (isGzip(bytes)) {
    start = 0.3;
    // A gzip of something else is told from its first kilobyte, not after inflating all of it.
    const head = gunzipHead(bytes, 1024);
    if (head.length > 0 && !looksLikePickle(head) && !looksLikeJson(head)) throw new ImportError('not-a-snapshot', `${NOT_A_SNAPSHOT} It is gzip-compressed, but what it holds is neither.`);
    const limit = inflateLimit(bytes.length, maxBytes);
    try {
      data = options.gunzip ? platformGunzip(options.gunzip, bytes, limit) : gunzipBounded(bytes, limit, (f) => progress(f * start));
    } catch (e) {
      throw e instanceof ImportError && e.code === 'too-large' ? inflatedTooFar(bytes.length, maxBytes) : e;
    }
  } else if (bytes.length > maxBytes) {
    throw tooLarge(`it is ${formatBytes(bytes.length)}`, maxBytes);
  }
  progress(start);

  let raw: unknown;
  if (looksLikePickle(data)) {
    const pickleOptions: ReadPickleOptions = {
      intern: SNAPSHOT_WORDS,
      ...(report ? { onProgress: (f: number) => report(start + f * (0.97 - start)) } : {}),
    };
    if (asColumns) {
      const rows = new TraceRows(data.length, options.details ?? false);
      try {
        const read = checkSnapshot(readPickle(data, { ...pickleOptions, fastPath: rows }), rows);
        progress(1);
        return read;
      } catch {
        // A file that reuses an entry in ways torch never does, or a bad one: read it again the
        // generic way, whose outcome and messages are then the ones decodeSnapshotFile gives.
      }
    }
    raw = readPickle(data, pickleOptions);
  } else {
    const c = firstNonSpace(data);
    if (c !== 0x7b && c !== 0x5b) {
      throw new ImportError('not-a-snapshot', data.length === 0 ? `${NOT_A_SNAPSHOT} The file is empty.` : NOT_A_SNAPSHOT);
    }
    raw = parseJson(data);
  }
  progress(0.97);
  const read = checkSnapshot(raw, undefined);
  if (asColumns) {
    read.traces = read.snapshot.device_traces.map((entries) => traceColumnsFromEntries(entries, options.details ?? false));
    // As the fast path leaves them: the columns hold the traces.
    read.snapshot.device_traces = read.traces.map(() => []);
  }
  progress(1);
  return read;
}

// ---------------------------------------------------------------- Snapshot -> bytes

/** The snapshot as PyTorch writes it: no addr on an 'oom' entry; a pool_id as a tuple, in a pickle. */
function exportTraces(traces: TraceEntry[][], tuples: boolean): TraceEntry[][] {
  return traces.map((list) =>
    list.some((e) => e.action === 'oom' || (tuples && e.pool_id))
      ? list.map((e) => {
          const out = tuples && e.pool_id ? { ...e, pool_id: tuple(...e.pool_id) as unknown as [number, number] } : e;
          if (out.action !== 'oom') return out;
          const { addr: _addr, ...rest } = out;
          return rest as TraceEntry;
        })
      : list,
  );
}

function exportShape(snapshot: Snapshot, tuples: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    segments: tuples
      ? snapshot.segments.map((s) =>
          s.segment_pool_id ? { ...s, segment_pool_id: tuple(...s.segment_pool_id) } : s,
        )
      : snapshot.segments,
    // Trace entries are referenced once each; the writer need not track them for sharing.
    device_traces: tuples
      ? exportTraces(snapshot.device_traces, true).map((list) => unsharedItems(list as unknown as PickleWritable[]))
      : exportTraces(snapshot.device_traces, false),
  };
  if (snapshot.allocator_settings !== undefined) out.allocator_settings = snapshot.allocator_settings;
  if (snapshot.external_annotations !== undefined) out.external_annotations = snapshot.external_annotations;
  return out;
}

/** The most JSON the CLI writes: V8's longest string is about 512 MiB. */
const MAX_JSON_BYTES = 384 * 2 ** 20;

/** The bytes JSON would spend on the entries' and blocks' stack frames: each distinct list measured once. */
function jsonFrameBytes(snapshot: Snapshot): number {
  const sizes = new Map<readonly unknown[], number>();
  const bytesOf = (frames: readonly unknown[] | undefined): number => {
    if (!frames || frames.length === 0) return 0;
    let n = sizes.get(frames);
    if (n === undefined) sizes.set(frames, (n = JSON.stringify(frames).length));
    return n;
  };
  let total = 0;
  for (const list of snapshot.device_traces) for (const e of list) total += bytesOf(e.frames);
  for (const seg of snapshot.segments) for (const b of seg.blocks) total += bytesOf(b.frames);
  return total;
}

/**
 * Writes a snapshot as a protocol-4 pickle (what _dump_snapshot writes; segment_pool_id is a
 * tuple there) or as JSON, uncompressed. Both read back through decodeSnapshotFile and
 * pytorch.org/memory_viz.
 */
export function encodeSnapshotFile(snapshot: Snapshot, format: SnapshotFormat): Uint8Array {
  if (format === 'pickle') return writePickle(exportShape(snapshot, true) as PickleWritable);
  // JSON writes a shared frame list out in full at each entry: its size is known before it is made,
  // so a file whose entries share long lists is refused at once, not after gigabytes of text.
  const frameText = jsonFrameBytes(snapshot);
  if (frameText > MAX_JSON_BYTES) {
    throw new ImportError(
      'too-large',
      `The snapshot would be over ${formatBytes(frameText)} as JSON (JSON repeats the stack frames of every entry; the limit is ${formatBytes(MAX_JSON_BYTES)}). Save it as a pickle instead.`,
    );
  }
  let text: string;
  try {
    text = JSON.stringify(exportShape(snapshot, false));
  } catch (e) {
    if (e instanceof RangeError) {
      // JSON repeats every shared frame list in full; a long trace passes the string limit.
      throw new ImportError(
        'too-large',
        'The snapshot is too large to write as JSON (JSON repeats the stack frames of every ' +
          'entry). Save it as a pickle instead.',
      );
    }
    throw e;
  }
  return new TextEncoder().encode(text);
}
