// The snapshots a command replays, read (and, gzip-compressed, inflating) from the process's first
// moment, while the rest of the CLI loads: entry.ts calls this before it imports main.ts. Of a predict's
// recordings, the first (the others are read on worker threads: recording-worker.ts). Anything unusual (a bad command line, a file that cannot be read) is left for
// main.ts to report.
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isGzip } from '../lib/gzip-frame';
import type { SnapshotByteStream } from '../trace/snapshot/snapshot-stream';
import { OPTIONS } from './cli-options';
import { inflatingStream } from './inflating-stream';

export interface EarlyRead {
  file: string;
  bytes: Uint8Array;
  /** Its inflating bytes, where it is gzip-compressed. */
  inflating: SnapshotByteStream | null;
}

/** Commands that replay FILE, the whole of it. */
const REPLAYING = new Set(['replay', 'sweep', 'stats', 'explain']);

function read(file: string): EarlyRead | null {
  try {
    if (!statSync(file).isFile()) return null;
    const bytes = readFileSync(file);
    return { file, bytes, inflating: isGzip(bytes) ? inflatingStream(bytes) : null };
  } catch {
    return null;
  }
}

export function readEarly(argv: readonly string[]): EarlyRead[] {
  const [command, ...rest] = argv;
  let positionals: string[];
  try {
    positionals = parseArgs({ args: rest, allowPositionals: true, options: OPTIONS }).positionals;
  } catch {
    return [];
  }
  // predict's recordings are SIZE:FILE.
  const files = command === 'predict' ? positionals.slice(0, 1).map((p) => p.slice(p.indexOf(':') + 1)) : command && REPLAYING.has(command) && positionals.length === 1 ? positionals : [];
  return files.map(read).filter((r) => r !== null);
}
