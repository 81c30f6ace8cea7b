// splitscope batch INPUTS... [--conf C]... --out results.jsonl [--workers N] [--shard I/N] [--capacity X]:
// every snapshot file among INPUTS (files, or folders searched for .pickle, .pickle.gz, .pkl, .json)
// replayed under every config, in worker threads, one JSON line per file and config (trace/batch). A
// file that cannot be read is an error row and the batch goes on; one found in a folder that is not a
// regular file (a FIFO, a device, a socket, a broken link) is an error row without being opened; one
// named on the command line is refused (exit 2) before any work. Rows already in --out are not made
// again (a killed run resumes where it stopped; a last line cut short by the kill is dropped); an --out
// that is not a results file is refused by name and left as it was. --out is made before the work, so
// a shard with no files writes its empty file. --shard I/N takes the I-th of N deterministic shares of
// the files, for a cluster's workers (README: Dask, Kubernetes, Ray). splitscope batch-summary
// results.jsonl prints what the rows say.
import { accessSync, appendFileSync, constants, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker } from 'node:worker_threads';
import { parseAllocConf } from '../allocator/config-parser';
import { grouped } from '../lib/grouped';
import { batchRows, isNotBatchResults, parseBatchResults, type BatchRow } from '../trace/batch/batch-rows';
import { batchSummary, batchSummaryText } from '../trace/batch/batch-summary';
import { decodeSnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { capacityOption, UsageError } from './cli-format';
import { nodeGunzip } from './node-gunzip';
import { checkOutput, writeOutput } from './output-file';
import { readBytes, regularFile } from './read-file';

const SNAPSHOT_NAME = /\.(pickle|pkl|json)(\.gz)?$/i;

/** A file batch found: read by a worker, or (`refused`) an error row at once, never opened. */
export interface BatchInput {
  file: string;
  refused?: string;
}

const codeOf = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? (e as Error).message);
};

/**
 * The snapshot files INPUTS name, sorted (the order shards are cut from). A path named that is not a
 * regular file or a folder is refused (UsageError); in a folder, a snapshot's name that is not a
 * regular file, or a folder that cannot be listed, is kept with the reason it is refused.
 */
export function batchInputs(inputs: readonly string[]): BatchInput[] {
  const out = new Map<string, BatchInput>();
  // Folders walked, by device and inode: a link back up the tree is walked once.
  const seen = new Set<string>();
  const walk = (path: string, st: Stats, named: boolean): void => {
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) return;
    seen.add(id);
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch (e) {
      if (named) throw new UsageError(`cannot read the folder ${path}: ${codeOf(e)}`);
      out.set(path, { file: path, refused: `cannot read the folder ${path}: ${codeOf(e)}` });
      return;
    }
    for (const name of names) {
      const p = join(path, name);
      let sub: Stats | null = null;
      try {
        sub = statSync(p);
      } catch {
        // A broken link, or a name gone since the listing: regularFile says which, below.
      }
      if (sub?.isDirectory()) walk(p, sub, false);
      else if (SNAPSHOT_NAME.test(name)) {
        try {
          regularFile(p);
          out.set(p, { file: p });
        } catch (e) {
          out.set(p, { file: p, refused: (e as Error).message });
        }
      }
    }
  };
  for (const path of inputs) {
    let st: Stats;
    try {
      st = statSync(path);
    } catch (e) {
      throw new UsageError(`cannot read ${path}: ${codeOf(e) === 'no such file' ? 'no such file or folder' : codeOf(e)}`);
    }
    if (st.isDirectory()) walk(path, st, true);
    else {
      regularFile(path); // a FIFO, a device, a socket: refused by name, before any work
      out.set(path, { file: path });
    }
  }
  return [...out.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** "2/8" -> the files whose index is 2 modulo 8. */
function shardOf<T>(files: T[], shard: string | undefined): T[] {
  if (shard === undefined) return files;
  const m = /^(\d+)\/(\d+)$/.exec(shard.trim());
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new UsageError(`--shard takes I/N with 0 <= I < N (e.g. 0/4), not '${shard}'`);
  const [i, n] = [Number(m[1]), Number(m[2])];
  return files.filter((_, k) => k % n === i);
}

const rowKey = (file: string, conf: string | null): string => JSON.stringify([file, conf]);

/** What `st` is, in words, where batch's --out cannot be it. */
const notRegular = (st: Stats): string =>
  st.isFIFO() ? 'a FIFO (named pipe)' : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device' : st.isSocket() ? 'a socket' : 'not a regular file';

/**
 * The rows already in `out`, a results file of splitscope batch, or refused (UsageError, the file left
 * as it was): a line that is not a row is never dropped. Only a last line cut short by a kill is
 * dropped (it is made again), and a last row without its newline gets one; either rewrite goes to a
 * temporary file renamed into place. A missing `out` is made, empty, now: the output is checked before
 * the work, and a shard with no files leaves its (empty) results.
 */
function rowsWritten(out: string, inputs: readonly string[]): BatchRow[] {
  checkOutput(out, { overwrite: true, inputs });
  let st: Stats | null = null;
  try {
    st = statSync(out);
  } catch {
    // Not there: made below.
  }
  if (st === null) {
    writeOutput(out, '', { overwrite: false });
    return [];
  }
  if (!st.isFile()) throw new UsageError(`cannot write ${out}: it is ${notRegular(st)}; batch's --out is a results file that it appends to and reads back to resume`);
  let bytes: Buffer;
  try {
    accessSync(out, constants.W_OK);
    bytes = readFileSync(out);
  } catch (e) {
    throw new UsageError(`cannot write ${out}: ${codeOf(e)}`);
  }
  const read = parseBatchResults(bytes.toString('utf8'));
  if (isNotBatchResults(read)) {
    throw new UsageError(
      `${out}, line ${read.line}: not a row of splitscope batch (${read.problem}). --out takes a results file of splitscope batch ` +
        `(the rows in it are not made again); ${out} is left as it was: choose another --out, or mend that line.`,
    );
  }
  if (read.end === 'cut') {
    writeOutput(out, bytes.subarray(0, bytes.lastIndexOf(10) + 1), { overwrite: true });
    console.error(`splitscope batch: the last line of ${out} was cut short (a run killed mid-write): dropped, and its rows made again`);
  } else if (read.end === 'unterminated') writeOutput(out, Buffer.concat([bytes, Buffer.from('\n')]), { overwrite: true });
  return read.rows;
}

export interface BatchOptions {
  conf?: string[];
  out?: string;
  workers?: string;
  shard?: string;
  capacity?: string;
}

interface Job {
  file: string;
  confs: (string | null)[];
}

const errorRows = (job: Job, error: string): BatchRow[] => job.confs.map((conf) => ({ file: job.file, conf, ok: false as const, error }));

export async function batchCommand(inputs: readonly string[], options: BatchOptions): Promise<number> {
  if (inputs.length === 0) throw new UsageError('batch takes snapshot files or folders: splitscope batch DUMPS/ --conf expandable_segments:True --out results.jsonl');
  if (!options.out) throw new UsageError('batch needs --out results.jsonl (rows already there are not made again)');
  const confs: (string | null)[] = options.conf?.length ? options.conf : [null];
  for (const c of confs) if (c !== null) parseAllocConf(c); // refused before any work
  const capacity = capacityOption(options.capacity);
  const workers = options.workers !== undefined ? Number(options.workers) : Math.min(4, availableParallelism());
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError(`--workers takes a whole number above 0, not '${options.workers}'`);
  const found = batchInputs(inputs);
  const files = shardOf(found, options.shard).map((f) => ({ ...f, file: resolve(f.file) }));
  const out = options.out;
  const done = new Set(rowsWritten(out, found.filter((f) => !f.refused).map((f) => f.file)).map((r) => rowKey(r.file, r.conf)));
  const todo = files.map((f) => ({ ...f, confs: confs.filter((c) => !done.has(rowKey(f.file, c))) })).filter((j) => j.confs.length > 0);
  const refused = todo.filter((j) => j.refused !== undefined);
  const jobs: Job[] = todo.filter((j) => j.refused === undefined).map(({ file, confs }) => ({ file, confs }));
  const threads = Math.min(workers, jobs.length);
  console.error(`splitscope batch: ${grouped(files.length)} files x ${confs.length} configs; ${grouped(todo.length)} files to do on ${threads} workers`);
  let finished = 0;
  let unreadable = 0;
  const progress = (): string => `${grouped(finished)} of ${grouped(todo.length)} files${unreadable > 0 ? ` (${grouped(unreadable)} could not be read)` : ''}`;
  const write = (rows: BatchRow[]): void => {
    try {
      appendFileSync(out, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    } catch (e) {
      throw new UsageError(`cannot write ${out}: ${codeOf(e)} (the rows written before are kept; run again to go on)`);
    }
    finished++;
    if (rows.every((r) => !r.ok)) unreadable++;
    if (finished % 25 === 0 || finished === todo.length) console.error(`  ${progress()}`);
  };
  // Refused when found (not a regular file): their error rows now, nothing opened.
  for (const j of refused) write(errorRows(j, j.refused!));
  const entry = fileURLToPath(new URL('./splitscope.mjs', import.meta.url));
  const live = new Set<Worker>();
  let next = 0;
  let failure: unknown = null;
  const fail = (e: unknown): void => {
    failure ??= e;
    for (const w of live) void w.terminate();
  };
  const slot = (): Promise<void> =>
    new Promise<void>((finish) => {
      const start = (): void => {
        let job: Job | undefined;
        let died: Error | null = null;
        const w = new Worker(entry, { argv: ['batch-worker'], workerData: { capacity: capacity === undefined ? undefined : capacity } });
        live.add(w);
        const give = (): void => {
          job = failure === null ? jobs[next++] : undefined;
          if (job) w.postMessage(job);
          else void w.terminate();
        };
        w.on('message', (rows: BatchRow[]) => {
          job = undefined;
          try {
            write(rows);
          } catch (e) {
            fail(e);
          }
          give();
        });
        w.on('online', give);
        w.on('error', (e) => (died = e));
        w.on('exit', () => {
          live.delete(w);
          // A thread that ran out of memory on its file: that file is an error row, another thread goes on.
          const oom = (died as NodeJS.ErrnoException | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
          if (job && oom && failure === null) {
            try {
              write(errorRows(job, `ran out of memory replaying it (a worker thread's heap): ${died!.message}`));
            } catch (e) {
              fail(e);
            }
            start();
            return;
          }
          // Any other death is a bug: the batch stops (exit 70), its rows so far kept, and nothing is taken for done.
          if ((job || died) && failure === null) fail(died ?? new Error(`a batch worker thread stopped on ${job!.file}`));
          finish();
        });
      };
      start();
    });
  await Promise.all(Array.from({ length: threads }, slot));
  if (failure !== null) throw failure;
  console.error(
    finished === 0
      ? `splitscope batch: done: nothing to do, ${out} holds every row`
      : `splitscope batch: done: ${grouped(finished)} files' rows written to ${out}` +
          (unreadable > 0 ? `; ${grouped(unreadable)} could not be read (their rows say why: "ok": false, "error")` : '; every one read'),
  );
  return 0;
}

/** A batch worker thread: a file in, its rows out (its errors are rows too). */
export function batchWorker(data: { capacity?: { kind: 'fraction'; bytes: number } | null }): Promise<number> {
  return new Promise(() => {
    parentPort!.on('message', ({ file, confs }: Job) => {
      let rows: BatchRow[];
      try {
        // readBytes refuses what is not a regular file (a FIFO's open would wait forever) before opening it.
        const loaded = decodeSnapshotForReplay(readBytes(file), { gunzip: nodeGunzip, details: true });
        rows = batchRows(file, loaded, confs, data.capacity);
      } catch (e) {
        rows = errorRows({ file, confs }, (e as Error).message);
      }
      parentPort!.postMessage(rows);
    });
  });
}

/** splitscope batch-summary results.jsonl... [--json]: each a results file of splitscope batch, or refused by name. */
export function batchSummaryCommand(files: readonly string[], json: boolean): number {
  if (files.length === 0) throw new UsageError('batch-summary takes the results of splitscope batch: results.jsonl [more.jsonl ...]');
  const rows: BatchRow[] = [];
  for (const f of files) {
    let text: string;
    try {
      regularFile(f);
      text = readFileSync(f, 'utf8');
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(e.message.replace(/, not a snapshot file$/, ', not a results file of splitscope batch'));
      throw new UsageError(`cannot read ${f}: ${codeOf(e)}`);
    }
    const read = parseBatchResults(text);
    if (isNotBatchResults(read)) throw new UsageError(`${f}, line ${read.line}: not a row of splitscope batch (${read.problem}); batch-summary reads the results files splitscope batch writes`);
    if (read.end === 'cut') console.error(`note: the last line of ${f} is cut short (a batch still writing it, or killed mid-write): left out`);
    rows.push(...read.rows);
  }
  if (rows.length === 0) {
    throw new UsageError(`${files.length === 1 ? `${files[0]} holds` : `${files.join(', ')} hold`} no rows of splitscope batch: nothing to summarize (an empty shard's results are empty: name the other shards' files too)`);
  }
  const summary = batchSummary(rows);
  console.log(json ? JSON.stringify(summary) : batchSummaryText(summary));
  return 0;
}
