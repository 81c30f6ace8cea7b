// One file of a fleet's batch (many OOM dumps, many configs): the file replayed under each config
// asked for (null: as recorded), one row per config with what a platform team sets side by side:
// peaks, the first OOM (as far as the recording reaches), reserved but unallocated memory at it (a
// small one: the memory was really in use, no setting helps), and what the memory was at the peak.
// What a results file's row is (`batchRowProblem`) and a results file read back (`parseBatchResults`):
// the CLI's resume and batch-summary read them alike.
import { configToString } from '../../allocator/config';
import type { Capacity } from '../../allocator/capacity';
import { categorize, categoryRecord, categoryTotals, type CategoryKey } from '../categories/categories';
import { coverageOf, oomOutcome } from '../replay/coverage';
import { planSnapshotReplay, replayNotes } from '../replay/replay-snapshot';
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
  /**
   * The replay's "Inconsistent trace: ..." warnings (a free of an address no segment held, an
   * allocation made twice): the recording contradicts itself there, and the figures are the model's
   * best reading of it. Absent in rows written before notes were (read back as none).
   */
  notes?: string[];
}

export interface BatchRowError {
  file: string;
  conf: string | null;
  ok: false;
  error: string;
}

export type BatchRow = BatchRowOk | BatchRowError;

/** The replay's warnings that the recording contradicts itself start so (cli-format's noteLine too). */
const INCONSISTENT = 'Inconsistent trace:';
/** At most this many of them in a row. */
const MAX_NOTES = 20;

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
      const notes = [...new Set([...plan.notes, ...replayNotes(run)].filter((n) => n.startsWith(INCONSISTENT)))];
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
        notes: notes.length > MAX_NOTES ? [...notes.slice(0, MAX_NOTES), `${INCONSISTENT} ${notes.length - MAX_NOTES} more warnings left out`] : notes,
      };
    } catch (e) {
      return { file, conf, ok: false, error: (e as Error).message };
    }
  });
}

/** Why `value` (a results line, parsed) is not a row of splitscope batch; null where it is one. */
export function batchRowProblem(value: unknown): string | null {
  if (Array.isArray(value)) return 'a JSON array, not a row';
  if (typeof value !== 'object' || value === null) return `JSON ${value === null ? 'null' : typeof value}, not a row`;
  const r = value as Record<string, unknown>;
  if (typeof r.file !== 'string' || r.file === '') return 'a JSON object with no file';
  if (!('conf' in r) || (r.conf !== null && typeof r.conf !== 'string')) return 'a JSON object with no conf: a config or null';
  if (typeof r.ok !== 'boolean') return 'a JSON object with no ok';
  if (r.ok && (typeof r.requests !== 'number' || typeof r.outcome !== 'string')) return 'an ok row with no requests or outcome';
  if (!r.ok && typeof r.error !== 'string') return 'an error row with no error';
  return null;
}

/** A results file read back: its rows, and how its last line ends. */
export interface BatchResults {
  rows: BatchRow[];
  /**
   * 'whole': every line a row, the last ending in a newline (or no lines at all). 'cut': the last line,
   * with no newline after it, is the start of a row whose write was cut short (a run killed mid-write):
   * it is not among `rows`. 'unterminated': the last line is a row with no newline after it.
   */
  end: 'whole' | 'cut' | 'unterminated';
}

/** Where a results file is not one: its first line (1-based) that is not a row, and why. */
export interface NotBatchResults {
  line: number;
  problem: string;
}

/** The start of a row as batch writes it, `{"file":` (or Python's `{"file": `), or a cut-short part of it. */
const rowStart = (line: string): boolean => {
  const compact = line.replace(/^\{\s*/, '{').replace(/^\{"file"\s*:/, '{"file":');
  return compact.startsWith('{"file":') || '{"file":'.startsWith(compact);
};

/**
 * `text` (a results file of splitscope batch: one JSON row a line) read back, or where it is not one.
 * Blank lines are skipped; only a last line without a newline that begins as a row does and does not
 * parse is taken for a write cut short; any other line that is not a row makes the file not results.
 */
export function parseBatchResults(text: string): BatchResults | NotBatchResults {
  const lines = text.split('\n');
  const rows: BatchRow[] = [];
  let end: BatchResults['end'] = 'whole';
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    if (line.trim() === '') continue;
    const last = k === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (last && rowStart(line)) {
        end = 'cut';
        break;
      }
      return { line: k + 1, problem: 'not JSON' };
    }
    const problem = batchRowProblem(value);
    if (problem !== null) return { line: k + 1, problem };
    rows.push(value as BatchRow);
    if (last) end = 'unterminated';
  }
  return { rows, end };
}

export const isNotBatchResults = (r: BatchResults | NotBatchResults): r is NotBatchResults => 'problem' in r;
