// A file the CLI was named, read whole. Only a regular file is read: a folder, a device (/dev/zero never
// ends), a FIFO (its open waits for a writer) or a socket is refused by name at once, before any read.
import { readFileSync, statSync, type Stats } from 'node:fs';
import { formatSize } from '../allocator/format-size';
import { DEFAULT_MAX_SNAPSHOT_BYTES } from '../trace/snapshot/snapshot-file';
import { UsageError } from './cli-format';

/** What `st` is, in words, when it is not a regular file. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** `file`'s stat, refused by name unless it is a regular file that exists. */
export function regularFile(file: string): Stats {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)}`);
  }
  if (!st.isFile()) throw new UsageError(`${file} is ${kindOf(st)}, not a snapshot file`);
  return st;
}

export function readBytes(file: string): Uint8Array {
  const { size } = regularFile(file);
  // Past this the reader refuses it anyway (a gzip too: it inflates to more): said before reading it.
  if (size > DEFAULT_MAX_SNAPSHOT_BYTES) throw new UsageError(`${file} is ${formatSize(size)}: splitscope reads snapshots of at most ${formatSize(DEFAULT_MAX_SNAPSHOT_BYTES)}`);
  try {
    return readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
