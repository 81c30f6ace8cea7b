// The figures a comparison sets side by side, and the sentence that says what differs most.
import { formatSize } from '../allocator/format-size';
import { compareRuns, runFigures, tiedAtFirstOom } from '../trace/sweep/rank-runs';
import { oomOutcome, wholeRun, type Coverage } from '../trace/replay/coverage';
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

/**
 * One sentence: which config does best (rank-runs.ts: no OOM, then the later first OOM, then peak
 * reserved, then churn), against the first; "avoids OOMs" only where the recording covers the whole run,
 * and where every config first fails at one request, a tie.
 */
export function comparisonSentence(runs: readonly CompareRun[], coverage: Coverage): string {
  if (runs.length < 2) return '';
  const peak = (r: CompareRun): number => r.stats['reserved_bytes.all.peak'] ?? 0;
  const figures = (r: CompareRun) => runFigures(r.stats, r.firstOom);
  // The first of the best: a tie keeps the config the comparison started from.
  const best = runs.reduce((a, b) => (compareRuns(figures(b), figures(a)) < 0 ? b : a));
  const first = runs[0]!;
  const outcome = (r: CompareRun): string => oomOutcome(r.firstOom, coverage);
  if (tiedAtFirstOom(runs.map(figures))) {
    return `Every config compared runs out at the same request (${outcome(first)}), where PyTorch raises: a tie, none gets further. Keep ${confLabel(first.conf)}, the config you started from.`;
  }
  const oomText =
    best.firstOom === null ? (wholeRun(coverage) ? 'avoids OOMs' : `has ${outcome(best)}`) : `gets furthest (${outcome(best)})`;
  if (best === first) return `${confLabel(first.conf)} ${oomText} with the least peak reserved memory (${formatSize(peak(first))}).`;
  const saved = peak(first) - peak(best);
  const change = saved >= 0 ? `${formatSize(saved)} less` : `${formatSize(-saved)} more`;
  const versus = first.firstOom !== null && first.firstOom !== best.firstOom ? `, which has an ${outcome(first)}` : '';
  return `${confLabel(best.conf)} ${oomText}, at ${formatSize(peak(best))} peak reserved: ${change} than ${confLabel(first.conf)}${versus}.`;
}
