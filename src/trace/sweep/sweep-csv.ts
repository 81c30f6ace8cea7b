// A sweep as CSV, one row per setting, with memory_stats names for the columns that have one.
import type { SweepRow } from './sweep';

const COLUMNS: (keyof SweepRow)[] = [
  'max_split_size_mb',
  'conf',
  'reserved_bytes.all.peak',
  'allocated_bytes.all.peak',
  'num_ooms',
  'first_oom_request',
  'num_alloc_retries',
  'num_device_alloc',
  'num_device_free',
  'largest_free_block_at_peak',
  'fragmentation_at_peak',
];

const cell = (v: unknown): string => {
  const s = v === null ? 'none' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function sweepCsv(rows: readonly SweepRow[]): string {
  return [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}
