// A snapshot written where --out names it: JSON for a name ending .json (or .json.gz), else a pickle
// (what _dump_snapshot writes and pytorch.org/memory_viz reads); gzip-compressed for a name ending .gz.
// JSON has no references: every entry's stack is written out in full (a pickle shares each list through
// its memo), many times the pickle's size; gzip takes that back to about the pickle's.
import { gzipSync } from 'node:zlib';
import type { Snapshot } from '../trace/snapshot/snapshot';
import { encodeSnapshotFile } from '../trace/snapshot/snapshot-file';

export function snapshotBytesFor(path: string, snapshot: Snapshot): Uint8Array {
  const gzip = /\.gz$/i.test(path);
  const bytes = encodeSnapshotFile(snapshot, /\.json(\.gz)?$/i.test(path) ? 'json' : 'pickle');
  return gzip ? gzipSync(bytes) : bytes;
}
