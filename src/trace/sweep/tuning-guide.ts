// A short tuning guide grounded in the user's own run: the settings worth trying, each replayed on
// this source, ranked by what it does here (rank-runs.ts), each with its figures and one sentence on
// why it helps or not. Its words reach no further than the recording: on one that ends at its OOM or
// began mid-run, a setting is "better in the recorded part", never "helps here" (coverage.ts).
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { MiB, ROUNDUP_POWER2_INTERVALS } from '../../allocator/constants';
import { formatSize } from '../../allocator/format-size';
import { churn, compareRuns, tiedAtFirstOom } from './rank-runs';
import type { SweepRow } from './sweep';
import { grouped } from '../../lib/grouped';
import { coverageCaveat, oomOutcome, wholeRun, type Coverage } from '../replay/coverage';

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
  /** How much of the program the replays cover. */
  coverage: Coverage;
}

export interface GuideItem {
  kind: CandidateKind;
  conf: string;
  row: SweepRow;
  /** Better than the current config on this run (fewer OOMs, or as few and less memory or churn). */
  helps: boolean;
  /** `helps` in words that reach no further than the recording ("helps here", "better in the recorded part"). */
  badge: string;
  /** The figures against the current config, in words. */
  figures: string;
  why: string;
}

export interface TuningGuide {
  current: SweepRow;
  items: GuideItem[];
  /** What to try first, or that nothing beats the current config, as far as the recording reaches. */
  verdict: string;
  /** How much of the program the replays cover. */
  coverage: Coverage;
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

function figuresOf(row: SweepRow, current: SweepRow, coverage: Coverage): string {
  const outcome = oomOutcome(row.first_oom_request, coverage);
  const now = oomOutcome(current.first_oom_request, coverage);
  const ooms = outcome === now ? `${outcome} (as now)` : `${outcome} (now ${now})`;
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

/** `helps` in words that reach no further than the recording. */
function badgeOf(helps: boolean, whole: boolean): string {
  if (whole) return helps ? 'helps here' : 'not for this run';
  return helps ? 'better in the recorded part' : 'not better in the recorded part';
}

export function tuningGuide(current: SweepRow, tried: { kind: CandidateKind; row: SweepRow }[], facts: RunFacts): TuningGuide {
  const whole = wholeRun(facts.coverage);
  const items = tried
    .map(({ kind, row }) => {
      const helps = compareRuns(row, current) < 0;
      return { kind, conf: row.conf, row, helps, badge: badgeOf(helps, whole), figures: figuresOf(row, current, facts.coverage), why: whyOf(kind, row, current, facts) };
    })
    .sort((a, b) => Number(b.helps) - Number(a.helps) || compareRuns(a.row, b.row));
  const first = items[0];
  const currentName = current.conf || 'the defaults';
  let verdict: string;
  if (first?.helps && whole) verdict = `Try ${first.conf || '(defaults)'} first.`;
  else if (first?.helps) {
    verdict =
      `On the recorded requests ${first.conf || '(defaults)'} does best (${oomOutcome(first.row.first_oom_request, facts.coverage)}). ` +
      `${coverageCaveat(facts.coverage)} Record a run under it to know.`;
  } else if (items.length > 0 && tiedAtFirstOom([current, ...items.map((i) => i.row)])) {
    verdict =
      `Every setting tried runs out at the same request as ${currentName} (${oomOutcome(current.first_oom_request, facts.coverage)}), where PyTorch raises: ` +
      `none helps, a tie. Keep ${currentName}; what avoids this OOM is less memory in use at that request (the story of the OOM says what it is).`;
  } else {
    verdict =
      `Nothing here beats ${currentName} on ${whole ? 'this run' : 'the recorded requests'}: the default is not always the worst, ` +
      `and each change above costs memory, OOMs or churn ${whole ? 'here' : 'there'}.`;
  }
  return { current, items, verdict, coverage: facts.coverage };
}
