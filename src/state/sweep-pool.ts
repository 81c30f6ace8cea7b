// Sweep workers for batches of replays, rows reported as they arrive: a warm pool shared by the
// max_split sweep, the tuning guide and the sweep explorer.
import type { Capacity } from '../allocator/capacity';
import type { AllocatorConfig } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import type { ReplaySummary } from '../worker/replay-protocol';
import { insertedCallsOf } from '../worker/replay-settings';
import type { InsertedCalls } from '../trace/replay/replay';
import type { SweepRow } from '../trace/sweep/sweep';
import type { RequestStream } from '../trace/stream/request-stream';
import type { SweepJob, SweepMessage, SweepReply } from '../worker/sweep-worker';
import { canShare, isShared } from '../worker/shared-stream';
import { startWorker } from './workers';

export interface SweepRun {
  /** Resolves when every job is done (errors are reported through onError, not thrown). */
  done: Promise<void>;
  /** Stops every worker of the run. */
  stop(): void;
}

/** What a view's source replays under in a sweep worker: the config asked for, the recorded one
 * (snapshots; null for a generated workload), the memory cap and the inserted calls, as the worker
 * resolved them for `summary`'s key. */
export interface ReplayBasis {
  asked: AllocatorConfig;
  recorded: AllocatorConfig | null;
  capacity: Capacity | null;
  calls: InsertedCalls;
}

export function replayBasis(summary: ReplaySummary): ReplayBasis {
  return {
    asked: parseAllocConf(summary.conf).config,
    recorded: summary.sourceKind === 'snapshot' ? parseAllocConf(summary.recordedConf).config : null,
    // The cap the replay ran under: the one asked for, or the source's own (a per_process_memory_fraction
    // key's, or the one a recorded OOM shows).
    capacity: summary.capacity,
    calls: insertedCallsOf(summary.key),
  };
}

/** Workers worth starting for `tasks` replays: one per core but one for the page, at least one. */
export function workerCount(tasks: number, asked?: number): number {
  return Math.max(1, Math.min(tasks, asked ?? Math.max(1, (navigator.hardwareConcurrency || 2) - 1)));
}

/** Jobs per worker a run is cut into where memory is not shared: a worker the page or the browser
 * slows down leaves its last jobs to the others, where one job per worker made the run wait for the
 * slowest (a 2-worker sweep of 32 settings ran 1.4x faster than 1 worker, not 2x). */
const JOBS_PER_WORKER = 4;

/** One job's part of a run's items (see SourceJob.claim). */
export interface Dealt<T> {
  items: T[];
  claim?: Int32Array;
}

/**
 * A run's items dealt to jobs for `workers` workers. Where memory is shared, every job holds them all
 * and one counter, and each worker takes the next item no other has taken: none idles while another
 * has a backlog, and none waits for the page between items. Otherwise they are dealt round-robin to
 * JOBS_PER_WORKER jobs per worker (neighbouring settings cost alike, so each job costs about the same).
 */
export function deal<T>(items: readonly T[], workers: number): Dealt<T>[] {
  if (workers > 1 && items.length > 1 && canShare()) {
    const claim = new Int32Array(new SharedArrayBuffer(4));
    // One array for every job: posting a job copies it anyway.
    const all = [...items];
    return Array.from({ length: Math.min(workers, items.length) }, () => ({ items: all, claim }));
  }
  const n = Math.max(1, Math.min(items.length, workers * JOBS_PER_WORKER));
  return Array.from({ length: n }, (_, k) => ({ items: items.filter((_, i) => i % n === k) }));
}

/**
 * Bytes of copies of one request stream the workers may hold at once, where memory is not shared
 * (worker/shared-stream.ts): each worker gets its own (a structured clone), and a 1 GB snapshot's
 * stream is ~200 MB. A run on a larger stream uses fewer workers.
 */
const STREAM_COPIES_BYTES = 512 * 2 ** 20;

function streamBytes(s: RequestStream): number {
  return [s.kind, s.id, s.size, s.stream, s.pool].reduce((n, a) => n + a.byteLength, 0);
}

const NONE = new Int32Array(0);

/** The stream less what a replay never reads (each request's trace entry, for exports and frames, and
 * its op's input, for GPU stress): a quarter less to copy and to hold per worker. */
function forReplay(stream: RequestStream): RequestStream {
  return { ...stream, source: NONE, input: NONE };
}

/**
 * The sweep workers, kept warm between runs: a worker starts once (a module load) and is sent each
 * source's request stream once (a structured clone of tens of MB on a large trace), then only jobs.
 * Jobs of every run wait in one queue for a free worker. A run that stops drops its waiting jobs and
 * ends its running ones by ending their workers, which are started again when next needed.
 */
class SweepPool {
  private readonly workers: PoolWorker[] = [];
  private readonly queue: Task[] = [];
  private readonly streamIds = new WeakMap<RequestStream, number>();
  private nextStreamId = 1;
  /** Workers the runs asked for at most: the pool grows to it and keeps them (each run stays within its own limit). */
  private size = 1;

  run(jobs: readonly SweepJob[], size: number, onRow: (index: number, row: SweepRow) => void, onError: (message: string) => void): SweepRun {
    const source = jobs.find((j) => j.kind === 'source');
    if (source) {
      if (!isShared(source.stream)) size = Math.max(1, Math.min(size, Math.floor(STREAM_COPIES_BYTES / streamBytes(source.stream))));
      // Idle workers holding another source's stream would keep it until their next job: end them.
      const id = this.streamIds.get(source.stream);
      for (const w of [...this.workers]) if (!w.task && w.streamId !== 0 && w.streamId !== id) this.retire(w);
    }
    this.size = Math.max(this.size, size);
    let settle: () => void = () => {};
    const done = new Promise<void>((resolve) => (settle = resolve));
    let left = jobs.length;
    const run: RunState = { stopped: false, limit: size, running: 0, onRow, onError, finished: () => --left === 0 && settle() };
    for (const job of jobs) this.queue.push({ job, run });
    if (jobs.length === 0) settle();
    this.dispatch();
    return {
      done,
      stop: () => {
        if (run.stopped) return;
        run.stopped = true;
        for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.run === run) this.queue.splice(i, 1);
        for (const w of [...this.workers]) if (w.task?.run === run) this.retire(w);
        settle();
        this.dispatch();
      },
    };
  }

  private dispatch(): void {
    for (;;) {
      // The first waiting job whose run is below its own limit of workers.
      const next = this.queue.findIndex((t) => t.run.running < t.run.limit);
      if (next < 0) return;
      let w = this.workers.find((x) => !x.task);
      if (!w && this.workers.length < this.size) w = this.start();
      if (!w) return;
      const task = this.queue.splice(next, 1)[0]!;
      w.task = task;
      task.run.running++;
      const { job } = task;
      if (job.kind === 'source') {
        const { stream, ...rest } = job;
        let id = this.streamIds.get(stream);
        if (id === undefined) this.streamIds.set(stream, (id = this.nextStreamId++));
        if (w.streamId !== id) {
          w.worker.postMessage({ type: 'stream', id, stream: forReplay(stream) } satisfies SweepMessage);
          w.streamId = id;
        }
        w.worker.postMessage({ type: 'job', job: rest, streamId: id } satisfies SweepMessage);
      } else {
        w.worker.postMessage({ type: 'job', job } satisfies SweepMessage);
      }
    }
  }

  private start(): PoolWorker {
    const w: PoolWorker = { worker: startWorker('sweep'), task: null, streamId: 0 };
    w.worker.onmessage = (event: MessageEvent<SweepReply>) => {
      const task = w.task;
      if (!task) return;
      const m = event.data;
      if (m.type === 'row') {
        if (!task.run.stopped) task.run.onRow(m.index, m.row);
        return;
      }
      if (m.type === 'error' && !task.run.stopped) task.run.onError(m.message);
      w.task = null;
      task.run.running--;
      task.run.finished();
      this.dispatch();
    };
    // A worker that dies (out of memory, say) fails its job, not the run's others.
    w.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      const task = w.task;
      this.retire(w);
      if (task) {
        task.run.running--;
        if (!task.run.stopped) task.run.onError(`A sweep worker stopped: ${event.message || 'it ran out of memory or crashed'}.`);
        task.run.finished();
      }
      this.dispatch();
    };
    this.workers.push(w);
    return w;
  }

  private retire(w: PoolWorker): void {
    w.worker.terminate();
    this.workers.splice(this.workers.indexOf(w), 1);
  }
}

interface RunState {
  stopped: boolean;
  /** Workers this run may use at once, and uses now. */
  limit: number;
  running: number;
  onRow: (index: number, row: SweepRow) => void;
  onError: (message: string) => void;
  finished: () => void;
}

interface Task {
  job: SweepJob;
  run: RunState;
}

interface PoolWorker {
  worker: Worker;
  task: Task | null;
  /** The stream it holds. */
  streamId: number;
}

const pool = new SweepPool();

/** Runs `jobs` on the warm workers, at most `workers` at once (default: one per job, up to workerCount). */
export function runSweepJobs(
  jobs: readonly SweepJob[],
  onRow: (index: number, row: SweepRow) => void,
  onError: (message: string) => void,
  workers = workerCount(jobs.length),
): SweepRun {
  return pool.run(jobs, workers, onRow, onError);
}

/** How often arriving rows are reported (each report redraws the views that show them). */
const ROWS_FLUSH_MS = 200;

/**
 * runSweepJobs for `count` rows, collected in place: `onRows` hears the rows so far in batches, at most
 * every ROWS_FLUSH_MS (a redraw per row took the page's thread from the workers: a 32-setting sweep on
 * 2 workers ran no faster than on 1). Resolves with every row, or rejects with the first error; `stop`
 * aborting stops the workers.
 */
export async function collectRows(
  jobs: readonly SweepJob[],
  count: number,
  stop: AbortSignal,
  onRows: (rows: (SweepRow | null)[]) => void = () => {},
  workers?: number,
): Promise<SweepRow[]> {
  const rows: (SweepRow | null)[] = new Array<SweepRow | null>(count).fill(null);
  let error: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    timer = null;
    if (!stop.aborted) onRows([...rows]);
  };
  const run = runSweepJobs(
    jobs,
    (index, row) => {
      rows[index] = row;
      timer ??= setTimeout(flush, ROWS_FLUSH_MS);
    },
    (message) => (error ??= message),
    workers,
  );
  const end = (): void => run.stop();
  stop.addEventListener('abort', end);
  try {
    await run.done;
  } finally {
    stop.removeEventListener('abort', end);
    if (timer !== null) clearTimeout(timer);
  }
  stop.throwIfAborted();
  if (error !== null) throw new Error(error);
  return rows as SweepRow[];
}
