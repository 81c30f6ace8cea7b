// The story of a run's OOM (or, with none, its peak): what the memory was by category, what was
// reserved but unallocated and where it sat (each stream's largest free block; the segments that a few
// small live blocks kept from being released, with those blocks' sites and categories), the steps and
// what grew over them, and the fixes worth trying, each replayed (fixes.ts). Every figure is the
// replay's under the config and cap asked for, segments placed as that replay places them (as recorded
// under the recorded config: the OOM is the recording's own); each fix is a what-if, placed by the
// driver model.
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { MiB } from '../../allocator/constants';
import type { AllocationStacks } from '../measures/allocation-stacks';
import { stackSite } from '../measures/memory-by-stack';
import { replay, type AddressModel } from '../replay/replay';
import { coverageOf, type Coverage } from '../replay/coverage';
import type { TraceDetails } from '../snapshot/trace-columns';
import type { RequestStream } from '../stream/request-stream';
import { bytesByCategoryAt, categorize, categoryTotals, type CategoryTotals } from '../categories/categories';
import { suspectedLeaks, type SuspectedLeak } from '../categories/leaks';
import { stepStarts, steps, type Step } from '../categories/steps';
import type { TimelineAnnotation } from '../measures/timeline-annotations';
import { fixesFor, type Fix } from './fixes';

export interface LiveBlockInfo {
  size: number;
  site: string;
  category: number;
}

/** A segment held by a few small live blocks: empty_cache() cannot release it while they live. */
export interface HeldSegment {
  addr: number;
  size: number;
  stream: number;
  allocated: number;
  blocks: LiveBlockInfo[];
}

export interface Explanation {
  coverage: Coverage;
  /** What the replay found the recording contradicting itself with (replay.ts's problems). */
  problems: string[];
  /** The OOM (the replay's first) or, with none, the moment the live requested bytes peaked. */
  moment: { kind: 'oom'; request: number; size: number; message: string } | { kind: 'peak'; request: number };
  reserved: number;
  allocated: number;
  /** Requested bytes by Category at the moment. */
  categories: Float64Array;
  totals: CategoryTotals;
  /** Each stream's largest free block at the moment. */
  largestFree: { stream: number; bytes: number }[];
  held: HeldSegment[];
  steps: Step[];
  leaks: SuspectedLeak[];
  fixes: Fix[];
  /** The replay the fixes are set against. */
  peakReserved: number;
  firstOom: number | null;
}

/** At most this many live blocks make a segment "held by a few", and they hold at most this share of it. */
const FEW_BLOCKS = 3;
const SMALL_SHARE = 0.25;

export interface ExplainOptions {
  config: AllocatorConfig;
  capacity?: Capacity;
  /** Where the run's segments land (default: the driver model's placement). */
  addresses?: AddressModel;
  /** The program's marks on the requests (ProfilerStep ranges, user_metadata): its steps, where it marked them. */
  annotations?: readonly TimelineAnnotation[];
}

export function explainRun(stream: RequestStream, details: TraceDetails | undefined, stacks: AllocationStacks, options: ExplainOptions): Explanation {
  const categories = categorize(stream, details);
  const base = { config: options.config, addresses: options.addresses ?? ('simulated' as const), ...(options.capacity ? { capacity: options.capacity } : {}) };
  const run = replay(stream, { ...base, statsOnly: true });
  const oom = run.ooms[0];
  const totals = categoryTotals(stream, categories, oom ? oom.request : stream.length - 1);
  // Without an OOM, the moment the program held the most.
  const at = oom ? oom.request : Math.max(0, totals.peakRequest);
  const state = replay(stream, { ...base, statsOnly: true, until: at }).allocator;
  const site = (id: number): string => stackSite(stacks.stackOf(id));
  const largest = new Map<number, number>();
  const held: HeldSegment[] = [];
  for (const seg of state.segmentsByAddress()) {
    const live: LiveBlockInfo[] = [];
    let allocated = 0;
    for (let b = seg.head as typeof seg.head | null; b?.mapped; b = b.next) {
      if (b.allocated) {
        allocated += b.size;
        live.push({ size: b.size, site: b.tag >= 0 ? site(b.tag) : '(unknown)', category: b.tag >= 0 ? categories.of[b.tag]! : 6 });
      } else largest.set(seg.stream, Math.max(largest.get(seg.stream) ?? 0, b.size));
    }
    if (live.length > 0 && live.length <= FEW_BLOCKS && allocated <= SMALL_SHARE * seg.size && seg.size >= 2 * MiB) {
      held.push({ addr: seg.addr, size: seg.size, stream: seg.stream, allocated, blocks: live });
    }
  }
  held.sort((a, b) => b.size - b.allocated - (a.size - a.allocated));
  const starts = stepStarts(categories, options.annotations);
  const found = steps(stream, categories, starts);
  return {
    coverage: coverageOf(stream),
    problems: run.problems,
    moment: oom ? { kind: 'oom', request: oom.request, size: oom.size, message: oom.message } : { kind: 'peak', request: at },
    reserved: state.reservedBytes,
    allocated: state.memoryStats()['allocated_bytes.all.current']!,
    // At an OOM: what was live when the request failed, the request itself not among it.
    categories: bytesByCategoryAt(stream, categories, [oom ? at - 1 : at])[0]!,
    totals,
    largestFree: [...largest].map(([s, bytes]) => ({ stream: s, bytes })).sort((a, b) => a.stream - b.stream),
    held,
    steps: found,
    leaks: suspectedLeaks(stream, categories, stacks, starts),
    fixes: fixesFor(stream, categories, stacks, found, { config: options.config, ...(options.capacity ? { capacity: options.capacity } : {}), baseline: run, moment: at }),
    peakReserved: run.stats['reserved_bytes.all.peak']!,
    firstOom: oom?.request ?? null,
  };
}
