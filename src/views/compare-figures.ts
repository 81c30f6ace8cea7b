// The figures a comparison sets side by side, and the sentence that says what differs most.
import { formatSize } from '../allocator/format-size';
import { compareRuns, runFigures } from '../trace/sweep/rank-runs';
import type { CompareRun, CursorView } from '../worker/replay-protocol';

export interface CompareFigure {
  /** memory_stats() key at the end, or a fragmentation figure at the cursor. */
  key: string;
  label: string;
  bytes: boolean;
  value(run: CompareRun, view: CursorView | undefined): number;
}

const end = (key: string) => (run: CompareRun): number => run.stats[key] ?? 0;

export const COMPARE_FIGURES: CompareFigure[] = [
  { key: 'reserved_bytes.all.peak', label: 'peak reserved', bytes: true, value: end('reserved_bytes.all.peak') },
  { key: 'allocated_bytes.all.peak', label: 'peak allocated', bytes: true, value: end('allocated_bytes.all.peak') },
  { key: 'num_ooms', label: 'OOMs', bytes: false, value: end('num_ooms') },
  { key: 'num_alloc_retries', label: 'retries', bytes: false, value: end('num_alloc_retries') },
  { key: 'num_device_alloc', label: 'cudaMalloc / map', bytes: false, value: end('num_device_alloc') },
  { key: 'num_device_free', label: 'cudaFree / unmap', bytes: false, value: end('num_device_free') },
  {
    key: 'reserved_minus_allocated',
    label: 'reserved − allocated at cursor',
    bytes: true,
    value: (_r, v) => v?.fragmentation.reservedMinusAllocated ?? NaN,
  },
  { key: 'largest_free_block', label: 'largest free block at cursor', bytes: true, value: (_r, v) => v?.fragmentation.largestFreeBlock ?? NaN },
];

export const confLabel = (conf: string): string => conf || '(defaults)';

export function formatFigure(figure: CompareFigure, value: number): string {
  if (Number.isNaN(value)) return '…';
  return figure.bytes ? formatSize(value) : value.toLocaleString('en-US');
}

/** One sentence: which config does best (rank-runs.ts: OOMs, then peak reserved, then churn), against the first. */
export function comparisonSentence(runs: readonly CompareRun[]): string {
  if (runs.length < 2) return '';
  const peak = (r: CompareRun): number => r.stats['reserved_bytes.all.peak'] ?? 0;
  const ooms = (r: CompareRun): number => r.stats['num_ooms'] ?? 0;
  // The first of the best: a tie keeps the config the comparison started from.
  const best = runs.reduce((a, b) => (compareRuns(runFigures(b.stats), runFigures(a.stats)) < 0 ? b : a));
  const fewestOoms = ooms(best);
  const first = runs[0]!;
  const oomText = fewestOoms === 0 ? 'avoids OOMs' : `has the fewest OOMs (${fewestOoms})`;
  if (best === first) return `${confLabel(first.conf)} ${oomText} with the least peak reserved memory (${formatSize(peak(first))}).`;
  const saved = peak(first) - peak(best);
  const change = saved >= 0 ? `${formatSize(saved)} less` : `${formatSize(-saved)} more`;
  const versus = ooms(first) > fewestOoms ? `, where ${confLabel(first.conf)} has ${ooms(first)} OOM${ooms(first) > 1 ? 's' : ''}` : '';
  return `${confLabel(best.conf)} ${oomText} with ${formatSize(peak(best))} peak reserved, ${change} than ${confLabel(first.conf)}${versus}.`;
}
