// A short tuning guide grounded in the user's own run: the settings worth trying, each replayed on
// this source, ranked by what it does here (rank-runs.ts), each with its figures and one sentence on
// why it helps or not.
import { counted } from '../../lib/counted';
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { MiB, ROUNDUP_POWER2_INTERVALS } from '../../allocator/constants';
import { formatSize } from '../../allocator/format-size';
import { churn, compareRuns } from './rank-runs';
import type { SweepRow } from './sweep';
import { grouped } from '../../lib/grouped';

export type CandidateKind = 'expandable' | 'max_split' | 'roundup' | 'gc';

export interface GuideCandidate {
  kind: CandidateKind;
  config: AllocatorConfig;
}

/** What the run itself says about its requests. */
export interface RunFacts {
  largestRequest: number;
  /** Distinct request sizes (after rounding to 512 B). */
  distinctSizes: number;
  capacity: Capacity | null;
}

export interface GuideItem {
  kind: CandidateKind;
  conf: string;
  row: SweepRow;
  /** Better than the current config on this run (fewer OOMs, or as few and less memory or churn). */
  helps: boolean;
  /** The figures against the current config, in words. */
  figures: string;
  why: string;
}

export interface TuningGuide {
  current: SweepRow;
  items: GuideItem[];
  /** A sentence for when nothing beats the current config. */
  verdict: string;
}

/** The settings worth trying from `asked` (the current config): each one change on top of it. */
export function guideCandidates(asked: AllocatorConfig, bestMaxSplitMiB: number | null, facts: RunFacts): GuideCandidate[] {
  const out: GuideCandidate[] = [];
  if (!asked.expandableSegments) out.push({ kind: 'expandable', config: { ...asked, expandableSegments: true } });
  if (bestMaxSplitMiB !== null && bestMaxSplitMiB * MiB !== asked.maxSplitSize) {
    out.push({ kind: 'max_split', config: { ...asked, maxSplitSize: bestMaxSplitMiB * MiB } });
  }
  if (asked.roundupPower2Divisions.every((d) => d <= 1)) {
    out.push({ kind: 'roundup', config: { ...asked, roundupPower2Divisions: new Array<number>(ROUNDUP_POWER2_INTERVALS).fill(4) } });
  }
  // gc works only under a memory fraction, on cached blocks of cudaMalloc'd segments.
  if (facts.capacity?.kind === 'fraction' && asked.garbageCollectionThreshold === 0 && !asked.expandableSegments) {
    out.push({ kind: 'gc', config: { ...asked, garbageCollectionThreshold: 0.6 } });
  }
  return out;
}

const peak = (r: SweepRow): number => r['reserved_bytes.all.peak'];

function signed(bytes: number): string {
  return bytes === 0 ? 'the same' : `${bytes < 0 ? '−' : '+'}${formatSize(Math.abs(bytes))}`;
}

function figuresOf(row: SweepRow, current: SweepRow): string {
  const ooms = row.num_ooms === current.num_ooms ? `${counted(row.num_ooms, 'OOM')} (as now)` : `${counted(row.num_ooms, 'OOM')} (now ${current.num_ooms})`;
  return (
    `peak reserved ${formatSize(peak(row))} (${signed(peak(row) - peak(current))}), ${ooms}, ` +
    `${grouped(churn(row))} cudaMalloc/cudaFree or map/unmap calls (now ${grouped(churn(current))})`
  );
}

function whyOf(kind: CandidateKind, row: SweepRow, current: SweepRow, facts: RunFacts): string {
  const stranded = current.fragmentation_at_peak;
  switch (kind) {
    case 'expandable':
      return (
        `At the peak ${(stranded * 100).toFixed(0)}% of reserved memory was cached but unallocated; expandable segments map ` +
        'pages where requests need them and unmap free ones, so free memory is not stranded inside big segments.'
      );
    case 'max_split':
      return (
        `The sweep under the slider found ${row.conf.match(/max_split_size_mb:\d+/)?.[0] ?? 'it'} best. The largest request is ` +
        `${formatSize(facts.largestRequest)}: blocks at or above max_split_size stay whole for requests that large instead of ` +
        `being split for small ones (the rule of thumb, 1.2 × the largest request, says ${formatSize(1.2 * facts.largestRequest)}). ` +
        'It does not cap request sizes.'
      );
    case 'roundup':
      return (
        `The run asks for ${grouped(facts.distinctSizes)} distinct sizes; rounding them up to 4 steps per power of ` +
        'two makes a freed block fit the next, slightly different request, at the cost of some padding.'
      );
    case 'gc':
      return (
        `Under the ${formatSize(facts.capacity!.bytes)} cap, gc frees the cached segments idle longest before cudaMalloc would fail, ` +
        `instead of flushing the whole cache and retrying (retries now ${current.num_alloc_retries}, with gc ${row.num_alloc_retries}).`
      );
  }
}

export function tuningGuide(current: SweepRow, tried: { kind: CandidateKind; row: SweepRow }[], facts: RunFacts): TuningGuide {
  const items = tried
    .map(({ kind, row }) => ({
      kind,
      conf: row.conf,
      row,
      helps: compareRuns(row, current) < 0,
      figures: figuresOf(row, current),
      why: whyOf(kind, row, current, facts),
    }))
    .sort((a, b) => Number(b.helps) - Number(a.helps) || compareRuns(a.row, b.row));
  const verdict = items.some((i) => i.helps)
    ? `Try ${items[0]!.conf || '(defaults)'} first.`
    : `Nothing here beats ${current.conf || 'the defaults'} on this run: the default is not always the worst, ` +
      'and each change above costs memory, OOMs or churn here.';
  return { current, items, verdict };
}
