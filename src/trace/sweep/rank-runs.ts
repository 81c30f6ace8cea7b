// Which of several replays of one source did best: the one ranking that the sweep's suggestion, the
// tuning guide and the config comparison share. Fewest OOMs first (an OOM ends a job), then the
// least peak reserved memory (what decides the next OOM), then the least cudaMalloc/cudaFree (or
// map/unmap) churn (each call synchronizes the device).

/** The memory_stats() figures a ranking reads. */
export interface RunFigures {
  num_ooms: number;
  'reserved_bytes.all.peak': number;
  num_device_alloc: number;
  num_device_free: number;
}

/** cudaMalloc plus cudaFree calls (page maps and unmaps under expandable_segments). */
export const churn = (r: RunFigures): number => r.num_device_alloc + r.num_device_free;

/** Negative when `a` did better than `b`, 0 on a tie. */
export function compareRuns(a: RunFigures, b: RunFigures): number {
  return a.num_ooms - b.num_ooms || a['reserved_bytes.all.peak'] - b['reserved_bytes.all.peak'] || churn(a) - churn(b);
}

/** The figures of a memory_stats() record (missing ones read as 0). */
export function runFigures(stats: Readonly<Record<string, number>>): RunFigures {
  return {
    num_ooms: stats['num_ooms'] ?? 0,
    'reserved_bytes.all.peak': stats['reserved_bytes.all.peak'] ?? 0,
    num_device_alloc: stats['num_device_alloc'] ?? 0,
    num_device_free: stats['num_device_free'] ?? 0,
  };
}
