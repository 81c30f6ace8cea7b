// Which of several replays of one source did best: the one ranking that the sweep's suggestion, the
// tuning guide, the config comparison and explain's fixes share. No OOM first, then the later first OOM
// (the run gets further). PyTorch raises at the first OOM, which ends the job: two runs that first fail
// at the same request tie, whatever a replay that goes on past it counts after (more OOMs, a higher
// peak), and a tie keeps the config the user has. Without an OOM, the least peak reserved memory (what
// decides the next OOM), then the least cudaMalloc/cudaFree (or map/unmap) churn (each call
// synchronizes the device).

/** The figures a ranking reads: memory_stats() names, and where the first OOM came. */
export interface RunFigures {
  num_ooms: number;
  /** The first failed request (0-based), null when none failed. */
  first_oom_request: number | null;
  'reserved_bytes.all.peak': number;
  num_device_alloc: number;
  num_device_free: number;
}

/** cudaMalloc plus cudaFree calls (page maps and unmaps under expandable_segments). */
export const churn = (r: RunFigures): number => r.num_device_alloc + r.num_device_free;

/** Negative when `a` did better than `b`, 0 on a tie. */
export function compareRuns(a: RunFigures, b: RunFigures): number {
  const aOom = a.first_oom_request;
  const bOom = b.first_oom_request;
  if ((aOom === null) !== (bOom === null)) return aOom === null ? -1 : 1;
  if (aOom !== null && bOom !== null) return bOom - aOom;
  return a['reserved_bytes.all.peak'] - b['reserved_bytes.all.peak'] || churn(a) - churn(b);
}

/** Whether every run first fails at one request: then none helps, and the ranking is a tie. */
export function tiedAtFirstOom(runs: readonly RunFigures[]): boolean {
  const first = runs[0]?.first_oom_request ?? null;
  return first !== null && runs.every((r) => r.first_oom_request === first);
}

/** The figures of a memory_stats() record (missing ones read as 0) and the replay's first OOM. */
export function runFigures(stats: Readonly<Record<string, number>>, firstOom: number | null): RunFigures {
  return {
    num_ooms: stats['num_ooms'] ?? 0,
    first_oom_request: firstOom,
    'reserved_bytes.all.peak': stats['reserved_bytes.all.peak'] ?? 0,
    num_device_alloc: stats['num_device_alloc'] ?? 0,
    num_device_free: stats['num_device_free'] ?? 0,
  };
}
