// One of the sweep's workers: replays the source under each max_split setting (or whole config) it is
// given and answers with each row as it is done (the page draws the sweep as it fills in).
/// <reference lib="webworker" />
import type { AllocatorConfig } from '../allocator/config';
import type { Capacity } from '../allocator/capacity';
import type { RequestStream } from '../trace/request-stream';
import { configRow, sweepRow, type SweepRow } from '../trace/sweep';

export interface SweepJob {
  stream: RequestStream;
  base: AllocatorConfig;
  recorded: AllocatorConfig | null;
  capacity: Capacity | null;
  /** Indices into the page's list of settings, with their values ... */
  settings: { index: number; mb: number | null }[];
  /** ... or whole configs (the tuning guide's candidates). */
  configs?: { index: number; config: AllocatorConfig }[];
}

export type SweepReply = { type: 'row'; index: number; row: SweepRow } | { type: 'done' } | { type: 'error'; message: string };

const post = (m: SweepReply): void => (self as unknown as DedicatedWorkerGlobalScope).postMessage(m);

self.onmessage = (event: MessageEvent<SweepJob>) => {
  const job = event.data;
  try {
    const capacity = job.capacity ?? undefined;
    for (const { index, mb } of job.settings) {
      post({ type: 'row', index, row: sweepRow(job.stream, job.base, job.recorded, mb, capacity) });
    }
    for (const { index, config } of job.configs ?? []) {
      post({ type: 'row', index, row: configRow(job.stream, config, job.recorded, capacity) });
    }
    post({ type: 'done' });
  } catch (e) {
    post({ type: 'error', message: (e as Error).message });
  }
};
