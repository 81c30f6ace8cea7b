// One file of a fleet's batch (many OOM dumps, many configs): the file replayed under each config
// asked for (null: as recorded), one row per config with what a platform team sets side by side:
// peaks, the first OOM (as far as the recording reaches), reserved but unallocated memory at it (a
// small one: the memory was really in use, no setting helps), and what the memory was at the peak.
import { configToString } from '../../allocator/config';
import type { Capacity } from '../../allocator/capacity';
import { categorize, categoryRecord, categoryTotals, type CategoryKey } from '../categories/categories';
import { coverageOf, oomOutcome } from '../replay/coverage';
import { planSnapshotReplay } from '../replay/replay-snapshot';
import { replay } from '../replay/replay';
import type { SnapshotForReplay } from '../snapshot/snapshot-file';

export interface BatchRowOk {
  file: string;
  /** The config replayed under; null: the recording's own. */
  conf: string | null;
  ok: true;
  requests: number;
  recorded_conf: string;
  /** The recording's own OOM (an observer's dump ends there), if it has one. */
  recorded_oom_request: number | null;
  'reserved_bytes.all.peak': number;
  'allocated_bytes.all.peak': number;
  num_ooms: number;
  first_oom_request: number | null;
  /** As far as the recording reaches: "no OOM through request N, where the recording ends". */
  outcome: string;
  /** Reserved but unallocated memory when the first OOM came (null: none came). */
  reserved_minus_allocated_at_oom: number | null;
  reserved_at_oom: number | null;
  categories_at_peak: Record<CategoryKey, number>;
}

export interface BatchRowError {
  file: string;
  conf: string | null;
  ok: false;
  error: string;
}

export type BatchRow = BatchRowOk | BatchRowError;

/** `file`'s rows, one per config of `confs`; a config PyTorch would refuse is an error row of its own. */
export function batchRows(file: string, loaded: SnapshotForReplay, confs: readonly (string | null)[], capacity?: Capacity | null): BatchRow[] {
  const { snapshot, traces } = loaded;
  const trace = traces[0];
  const base = planSnapshotReplay(snapshot, { ...(trace ? { trace } : {}), ...(capacity !== undefined ? { capacity } : {}) });
  const { stream } = base;
  const categories = categorize(stream, trace?.details);
  const coverage = coverageOf(stream);
  const recordedOom = stream.recordedOoms.length > 0 ? stream.recordedOoms[0]! : null;
  return confs.map((conf): BatchRow => {
    try {
      const plan = planSnapshotReplay(snapshot, { ...(trace ? { trace } : {}), stream, ...(conf !== null ? { conf } : {}), ...(capacity !== undefined ? { capacity } : {}) });
      const run = replay(stream, { ...plan.replayOptions, statsOnly: true });
      const first = run.ooms[0]?.request ?? null;
      let atOom: { reserved: number; allocated: number } | null = null;
      if (first !== null) {
        const a = replay(stream, { ...plan.replayOptions, statsOnly: true, until: first }).allocator;
        atOom = { reserved: a.reservedBytes, allocated: a.memoryStats()['allocated_bytes.all.current']! };
      }
      const totals = categoryTotals(stream, categories, first ?? stream.length - 1);
      return {
        file,
        conf,
        ok: true,
        requests: stream.length,
        recorded_conf: configToString(plan.recorded),
        recorded_oom_request: recordedOom,
        'reserved_bytes.all.peak': run.stats['reserved_bytes.all.peak']!,
        'allocated_bytes.all.peak': run.stats['allocated_bytes.all.peak']!,
        num_ooms: run.ooms.length,
        first_oom_request: first,
        outcome: oomOutcome(first, coverage),
        reserved_minus_allocated_at_oom: atOom ? atOom.reserved - atOom.allocated : null,
        reserved_at_oom: atOom?.reserved ?? null,
        categories_at_peak: categoryRecord(totals.atPeak),
      };
    } catch (e) {
      return { file, conf, ok: false, error: (e as Error).message };
    }
  });
}
