// splitscope batch INPUTS... [--conf C]... --out results.jsonl [--workers N] [--shard I/N] [--capacity X]:
// every snapshot file among INPUTS (files, or folders searched for .pickle, .pickle.gz, .pkl, .json)
// replayed under every config, in worker threads, one JSON line per file and config (trace/batch). A
// file that cannot be read is an error row and the batch goes on; rows already in --out are not made
// again (a killed run resumes where it stopped; a line cut short by the kill is dropped); --shard I/N
// takes the I-th of N deterministic shares of the files, for a cluster's workers (README: Dask,
// Kubernetes, Ray). splitscope batch-summary results.jsonl prints what the rows say.
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker } from 'node:worker_threads';
import { parseAllocConf } from '../allocator/config-parser';
import { grouped } from '../lib/grouped';
import { batchRows, type BatchRow } from '../trace/batch/batch-rows';
import { batchSummary, batchSummaryText } from '../trace/batch/batch-summary';
import { decodeSnapshotForReplay } from '../trace/snapshot/snapshot-file';
import { capacityOption, UsageError } from './cli-format';
import { nodeGunzip } from './node-gunzip';

const SNAPSHOT_NAME = /\.(pickle|pkl|json)(\.gz)?$/i;

/** The snapshot files INPUTS name, sorted (the order shards are cut from). */
export function batchInputs(inputs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    let st;
    try {
      st = statSync(path);
    } catch {
      throw new UsageError(`cannot read ${path}: no such file or folder`);
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        const p = join(path, name);
        if (statSync(p).isDirectory() || SNAPSHOT_NAME.test(name)) walk(p);
      }
    } else out.push(path);
  };
  for (const i of inputs) walk(i);
  return [...new Set(out)].sort();
}

/** "2/8" -> the files whose index is 2 modulo 8. */
function shardOf(files: string[], shard: string | undefined): string[] {
  if (shard === undefined) return files;
  const m = /^(\d+)\/(\d+)$/.exec(shard.trim());
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new UsageError(`--shard takes I/N with 0 <= I < N (e.g. 0/4), not '${shard}'`);
  const [i, n] = [Number(m[1]), Number(m[2])];
  return files.filter((_, k) => k % n === i);
}

const rowKey = (file: string, conf: string | null): string => JSON.stringify([file, conf]);

/** The rows already in `out` (a last line cut short by a kill is dropped from the file). */
function rowsWritten(out: string): BatchRow[] {
  if (!existsSync(out)) return [];
  const text = readFileSync(out, 'utf8');
  const lines = text.split('\n');
  const rows: BatchRow[] = [];
  let good = 0;
  for (const line of lines) {
    if (line === '') continue;
    try {
      rows.push(JSON.parse(line) as BatchRow);
      good += line.length + 1;
    } catch {
      break;
    }
  }
  if (good < text.length) writeFileSync(out, text.slice(0, good));
  return rows;
}

export interface BatchOptions {
  conf?: string[];
  out?: string;
  workers?: string;
  shard?: string;
  capacity?: string;
}

export async function batchCommand(inputs: readonly string[], options: BatchOptions): Promise<number> {
  if (inputs.length === 0) throw new UsageError('batch takes snapshot files or folders: splitscope batch DUMPS/ --conf expandable_segments:True --out results.jsonl');
  if (!options.out) throw new UsageError('batch needs --out results.jsonl (rows already there are not made again)');
  const confs: (string | null)[] = options.conf?.length ? options.conf : [null];
  for (const c of confs) if (c !== null) parseAllocConf(c); // refused before any work
  const capacity = capacityOption(options.capacity);
  const workers = options.workers !== undefined ? Number(options.workers) : Math.min(4, availableParallelism());
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError(`--workers takes a whole number above 0, not '${options.workers}'`);
  const files = shardOf(batchInputs(inputs), options.shard).map((f) => resolve(f));
  const done = new Set(rowsWritten(options.out).map((r) => rowKey(r.file, r.conf)));
  const jobs = files.map((file) => ({ file, confs: confs.filter((c) => !done.has(rowKey(file, c))) })).filter((j) => j.confs.length > 0);
  console.error(`splitscope batch: ${grouped(files.length)} files x ${confs.length} configs; ${grouped(jobs.length)} files to do on ${Math.min(workers, jobs.length)} workers`);
  const out = options.out;
  let finished = 0;
  const write = (rows: BatchRow[]): void => {
    appendFileSync(out, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    finished++;
    if (finished % 25 === 0 || finished === jobs.length) console.error(`  ${grouped(finished)} of ${grouped(jobs.length)} files`);
  };
  const entry = fileURLToPath(new URL('./splitscope.mjs', import.meta.url));
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, jobs.length) }, () =>
      new Promise<void>((done, fail) => {
        const w = new Worker(entry, { argv: ['batch-worker'], workerData: { capacity: capacity === undefined ? undefined : capacity } });
        const give = (): void => {
          const job = jobs[next++];
          if (job) w.postMessage(job);
          else void w.terminate().then(() => done());
        };
        w.on('message', (rows: BatchRow[]) => {
          write(rows);
          give();
        });
        w.on('error', fail);
        w.on('online', give);
      }),
    ),
  );
  return 0;
}

/** A batch worker thread: a file in, its rows out (its errors are rows too). */
export function batchWorker(data: { capacity?: { kind: 'fraction'; bytes: number } | null }): Promise<number> {
  return new Promise(() => {
    parentPort!.on('message', ({ file, confs }: { file: string; confs: (string | null)[] }) => {
      let rows: BatchRow[];
      try {
        const loaded = decodeSnapshotForReplay(readFileSync(file), { gunzip: nodeGunzip, details: true });
        rows = batchRows(file, loaded, confs, data.capacity);
      } catch (e) {
        rows = confs.map((conf) => ({ file, conf, ok: false as const, error: (e as Error).message }));
      }
      parentPort!.postMessage(rows);
    });
  });
}

/** splitscope batch-summary results.jsonl [--json]. */
export function batchSummaryCommand(files: readonly string[], json: boolean): number {
  if (files.length === 0) throw new UsageError('batch-summary takes the results of splitscope batch: results.jsonl [more.jsonl ...]');
  const rows: BatchRow[] = [];
  for (const f of files) {
    if (!existsSync(f)) throw new UsageError(`cannot read ${f}: no such file`);
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, k) => {
        if (line.trim() === '') return;
        try {
          rows.push(JSON.parse(line) as BatchRow);
        } catch {
          throw new UsageError(`${f}, line ${k + 1}: not a row of splitscope batch (not JSON)`);
        }
      });
  }
  const summary = batchSummary(rows);
  console.log(json ? JSON.stringify(summary) : batchSummaryText(summary));
  return 0;
}
