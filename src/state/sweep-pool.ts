// Sweep workers for a batch of replays: one job per worker, rows reported as they arrive. Shared by
// the max_split sweep, the tuning guide and the sweep explorer.
import type { StoreApi } from 'zustand';
import type { Capacity } from '../allocator/capacity';
import type { AllocatorConfig } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import { useSession } from './session-store';
import type { SweepRow } from '../trace/sweep/sweep';
import type { SweepJob, SweepReply } from '../worker/sweep-worker';

export interface SweepRun {
  /** Resolves when every job is done (errors are reported through onError, not thrown). */
  done: Promise<void>;
  /** Stops every worker of the run. */
  stop(): void;
}

/** What the session's source replays under in a sweep worker: the config asked for, the recorded one
 * (snapshots; null for a generated workload) and the memory cap. Null before anything replayed. */
export function replayBasis(): { asked: AllocatorConfig; recorded: AllocatorConfig | null; capacity: Capacity | null } | null {
  const { settings, summary } = useSession.getState();
  if (!summary) return null;
  return {
    asked: parseAllocConf(settings.conf ?? summary.conf).config,
    recorded: summary.sourceKind === 'snapshot' ? parseAllocConf(summary.recordedConf).config : null,
    // The cap the replay ran under: the one asked for, or the source's own (a per_process_memory_fraction
    // key's, or the one a recorded OOM shows).
    capacity: settings.capacityBytes !== null ? { kind: 'fraction', bytes: settings.capacityBytes } : summary.capacity,
  };
}

/** Workers worth starting for `tasks` replays: one per core but one for the page, at least one. */
export function workerCount(tasks: number, asked?: number): number {
  return Math.max(1, Math.min(tasks, asked ?? Math.max(1, (navigator.hardwareConcurrency || 2) - 1)));
}

/** Items dealt round-robin to `n` jobs: neighbouring settings cost alike, so the workers finish together. */
export function deal<T>(items: readonly T[], n: number): T[][] {
  return Array.from({ length: n }, (_, k) => items.filter((_, i) => i % n === k));
}

export function runSweepJobs(jobs: readonly SweepJob[], onRow: (index: number, row: SweepRow) => void, onError: (message: string) => void): SweepRun {
  const workers = jobs.map(() => new Worker(new URL('../worker/sweep-worker.ts', import.meta.url), { type: 'module' }));
  let settle: () => void = () => {};
  const done = new Promise<void>((resolve) => (settle = resolve));
  let left = jobs.length;
  const finishOne = (worker: Worker): void => {
    worker.terminate();
    if (--left === 0) settle();
  };
  workers.forEach((worker, k) => {
    worker.onmessage = (event: MessageEvent<SweepReply>) => {
      const m = event.data;
      if (m.type === 'row') return onRow(m.index, m.row);
      if (m.type === 'error') onError(m.message);
      finishOne(worker);
    };
    worker.postMessage(jobs[k]);
  });
  if (jobs.length === 0) settle();
  return {
    done,
    stop: () => {
      for (const w of workers) w.terminate();
      settle();
    },
  };
}

/** A store that shows rows as they arrive and the last error. */
interface RowsStore {
  rows: (SweepRow | null)[];
  error: string | null;
}

/** runSweepJobs with each row put in place in `store.rows` and errors in `store.error`. */
export function runSweepJobsInto(jobs: readonly SweepJob[], store: StoreApi<RowsStore>): SweepRun {
  return runSweepJobs(
    jobs,
    (index, row) => {
      const rows = [...store.getState().rows];
      rows[index] = row;
      store.setState({ rows });
    },
    (message) => store.setState({ error: message }),
  );
}
