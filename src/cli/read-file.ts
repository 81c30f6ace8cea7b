// A file the CLI was named, read whole; a path that is a folder or cannot be read is a usage error
// that names it.
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from './cli-format';

export function readBytes(file: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    if (statSync(file).isDirectory()) throw new UsageError(`${file} is a directory, not a snapshot file`);
    bytes = readFileSync(file);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return bytes;
}
