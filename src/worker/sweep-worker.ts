// One of the sweep's workers: replays what it is given and answers with each row as it is done (the
// page draws a sweep as it fills in). Jobs: the source under max_split settings or whole configs,
// or a generated workload under many seeds.
/// <reference lib="webworker" />
import type { AllocatorConfig } from '../allocator/config';
import type { Capacity } from '../allocator/capacity';
import type { RequestStream } from '../trace/stream/request-stream';
import { seedRow } from '../trace/sweep/seed-sweep';
import { configRow, sweepRow, type SweepRow } from '../trace/sweep/sweep';
import type { InsertedCalls } from '../trace/replay/replay';

export interface SourceJob {
  kind: 'source';
  stream: RequestStream;
  base: AllocatorConfig;
  recorded: AllocatorConfig | null;
  capacity: Capacity | null;
  /** The view's inserted calls (empty_cache, reset_peak_memory_stats), made in every replay. */
  calls: InsertedCalls;
  /** Indices into the page's list of settings, with their values ... */
  settings: { index: number; mb: number | null }[];
  /** ... or whole configs. */
  configs?: { index: number; config: AllocatorConfig }[];
  /** Shared with the run's other jobs, which hold the same items: take them in turn (Claimed). */
  claim?: Int32Array;
}

export interface SeedsJob {
  kind: 'seeds';
  workload: string;
  params: Record<string, number>;
  config: AllocatorConfig;
  capacity: Capacity | null;
  seeds: { index: number; seed: number }[];
  claim?: Int32Array;
}

export type SweepJob = SourceJob | SeedsJob;

export type SweepReply = { type: 'row'; index: number; row: SweepRow } | { type: 'done' } | { type: 'error'; message: string };

/** From the pool (state/sweep-pool.ts): a source's stream, once per worker, and jobs that name it. */
export type SweepMessage =
  | { type: 'stream'; id: number; stream: RequestStream }
  | { type: 'job'; job: Omit<SourceJob, 'stream'>; streamId: number }
  | { type: 'job'; job: SeedsJob };

const post = (m: SweepReply): void => (self as unknown as DedicatedWorkerGlobalScope).postMessage(m);

/** The last stream sent (a new source's replaces it). */
let held: { id: number; stream: RequestStream } | null = null;

self.onmessage = (event: MessageEvent<SweepMessage>) => {
  const m = event.data;
  if (m.type === 'stream') {
    held = { id: m.id, stream: m.stream };
    return;
  }
  let job: SweepJob;
  if (m.job.kind === 'source') {
    const streamId = (m as { streamId: number }).streamId;
    if (held?.id !== streamId) {
      post({ type: 'error', message: 'The sweep worker lost its request stream; run the sweep again.' });
      return;
    }
    job = { ...m.job, stream: held.stream };
  } else job = m.job;
  try {
    const capacity = job.capacity ?? undefined;
    const rows: (() => SweepReply)[] = [];
    if (job.kind === 'seeds') {
      const { workload, params, config } = job;
      for (const { index, seed } of job.seeds) rows.push(() => ({ type: 'row', index, row: seedRow(workload, params, seed, config, capacity) }));
    } else {
      const { stream, base, recorded, calls } = job;
      for (const { index, mb } of job.settings) rows.push(() => ({ type: 'row', index, row: sweepRow(stream, base, recorded, mb, capacity, calls) }));
      for (const { index, config } of job.configs ?? []) rows.push(() => ({ type: 'row', index, row: configRow(stream, config, recorded, capacity, calls) }));
    }
    for (const row of claimed(rows, job.claim)) post(row());
    post({ type: 'done' });
  } catch (e) {
    post({ type: 'error', message: (e as Error).message });
  }
};

/**
 * A job's items in the order this worker takes them: all of them, in order; or, with a claim shared by
 * the run's jobs (which hold the same items), the next one no worker has taken yet, until none is left.
 */
function* claimed<T>(items: readonly T[], claim: Int32Array | undefined): Generator<T> {
  if (!claim) return yield* items;
  for (let i = Atomics.add(claim, 0, 1); i < items.length; i = Atomics.add(claim, 0, 1)) yield items[i]!;
}
