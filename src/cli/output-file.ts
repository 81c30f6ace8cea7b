// Where the CLI and the MCP server write what they make (a report, a snapshot, results, JUnit XML):
// checked before the work (a missing folder, a folder in the file's place, an input named as output),
// then written to a temporary file beside the target and renamed into place, so that a run killed
// mid-write leaves the old file whole. A file that exists is replaced only where the caller allows it
// (`overwrite`); a device or FIFO that exists (/dev/stdout, a process substitution) is written into,
// never renamed over. Every failure is a UsageError that names the path (exit 2).
import { closeSync, constants, openSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './cli-format';

export interface OutputOptions {
  /** Replace a regular file that exists (report's --force; a CI artifact such as --junit always). */
  overwrite: boolean;
  /** The files the command reads: none of them may be the output. */
  inputs?: readonly string[];
  /** How the refusal names the way to overwrite ("--force", "overwrite: true"). */
  force?: string;
}

const statOf = (path: string): Stats | null => {
  try {
    return statSync(path);
  } catch {
    return null;
  }
};

const reason = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: 'its folder does not exist',
    ENOTDIR: 'a part of its path is not a folder',
    EISDIR: 'it is a folder',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'the file system is read-only',
    ENAMETOOLONG: 'the name is too long',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'over the disk quota',
    ENXIO: 'a FIFO with no reader',
  };
  return (code && words[code]) ?? (e as Error).message;
};

/** Refuses `path` as an output before any work is done; the checks `writeOutput` repeats. */
export function checkOutput(path: string, options: OutputOptions): void {
  if (path === '') throw new UsageError('an output path is empty');
  const st = statOf(path);
  if (st?.isDirectory()) throw new UsageError(`cannot write ${path}: it is a folder`);
  if (st?.isFile()) {
    for (const input of options.inputs ?? []) {
      const other = statOf(input);
      if (other && other.dev === st.dev && other.ino === st.ino) throw new UsageError(`cannot write ${path}: it is ${input}, an input of this command`);
    }
    if (!options.overwrite) throw new UsageError(`${path} exists: splitscope does not replace a file unless asked (${options.force ?? '--force'})`);
  }
  if (st && !st.isFile()) return; // a device or FIFO: written into
  const folder = statOf(dirname(resolve(path)));
  if (!folder) throw new UsageError(`cannot write ${path}: its folder ${dirname(path)} does not exist`);
  if (!folder.isDirectory()) throw new UsageError(`cannot write ${path}: ${dirname(path)} is not a folder`);
  if (Buffer.byteLength(basename(path)) > 255) throw new UsageError(`cannot write ${path}: the name is too long`);
}

/** Temporary files this process has made (their names differ). */
let written = 0;

/** Writes `data` to `path` (after `checkOutput`'s checks), whole or not at all. */
export function writeOutput(path: string, data: string | Uint8Array, options: OutputOptions): void {
  checkOutput(path, options);
  const st = statOf(path);
  if (st && !st.isFile()) {
    try {
      // A FIFO with no reader would block the open: refused instead (ENXIO); the write itself may wait.
      // The write goes through a blocking descriptor opened while the probe's is still open: closing the
      // probe first would leave the FIFO with no writer a moment, and its reader would take that as the end.
      const probe = st.isFIFO() ? openSync(path, constants.O_WRONLY | constants.O_NONBLOCK) : null;
      const fd = openSync(path, 'w');
      if (probe !== null) closeSync(probe);
      try {
        writeFileSync(fd, data);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      throw new UsageError(`cannot write ${path}: ${reason(e)}`);
    }
    return;
  }
  const temp = join(dirname(resolve(path)), `.splitscope-${process.pid}-${++written}.tmp`);
  try {
    writeFileSync(temp, data, { flag: 'wx' });
    if (!options.overwrite && statOf(path)) throw Object.assign(new Error('exists'), { code: 'EEXIST' });
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && !options.overwrite) throw new UsageError(`${path} exists: splitscope does not replace a file unless asked (${options.force ?? '--force'})`);
    // The folder was there a moment ago (checkOutput): a file cannot be made in it (/proc, /sys).
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? `no file can be made in ${dirname(path)}` : reason(e);
    throw new UsageError(`cannot write ${path}: ${why}`);
  }
}
