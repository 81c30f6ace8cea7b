// The snapshot a command replays, read (and, gzip-compressed, inflating) from the process's first
// moment, while the rest of the CLI loads: entry.ts calls this before it imports main.ts. Anything
// unusual (a bad command line, a file that cannot be read) is left for main.ts to report.
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
const REPLAYING = new Set(['replay', 'sweep', 'stats']);

export function readEarly(argv: readonly string[]): EarlyRead | null {
  const [command, ...rest] = argv;
  if (!command || !REPLAYING.has(command)) return null;
  try {
    const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: OPTIONS });
    const file = positionals[0];
    if (positionals.length !== 1 || !file || !statSync(file).isFile()) return null;
    const bytes = readFileSync(file);
    return { file, bytes, inflating: isGzip(bytes) ? inflatingStream(bytes) : null };
  } catch {
    return null;
  }
}
