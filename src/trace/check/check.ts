// A memory regression gate: two recordings of one job (before and after a change) replayed under the
// same config and cap (each its own recorded config unless one is given), their figures set side by
// side (peaks, OOMs, cudaMalloc churn, fragmentation at the peak, the largest total of each category
// of memory, the allocation sites at the peak), and each limit asked for held or broken, with why.
import type { Capacity } from '../../allocator/capacity';
import { configToString } from '../../allocator/config';
import { formatSize } from '../../allocator/format-size';
import { grouped } from '../../lib/grouped';
import { CATEGORY_KEYS, CATEGORY_NAMES, categorize, categoryTotals, type CategoryKey } from '../categories/categories';
import { allocationStacks } from '../measures/allocation-stacks';
import { stackSite } from '../measures/memory-by-stack';
import { replaySnapshot } from '../replay/replay-snapshot';
import type { Snapshot } from '../snapshot/snapshot';
import type { TraceColumns } from '../snapshot/trace-columns';
import { RequestKind } from '../stream/request-stream';
import { allowed, growthText, type Limit } from './check-limits';

export interface CheckedRecording {
  name: string;
  snapshot: Snapshot;
  trace?: TraceColumns;
}

export interface RunSummary {
  name: string;
  conf: string;
  peakReserved: number;
  peakAllocated: number;
  ooms: number;
  firstOom: number | null;
  /** cudaMalloc + cudaFree calls (maps and unmaps under expandable segments). */
  churn: number;
  /** Reserved but unallocated memory when reserved memory peaked. */
  gapAtPeak: number;
  /** Each category's largest total (requested bytes). */
  categories: Record<CategoryKey, number>;
  /** Requested bytes by allocation site when the program held the most. */
  sites: Map<string, number>;
  /** The replay's notes: what contradicts the rest of the file ("Inconsistent trace: ...") among them. */
  notes: string[];
}

export interface LimitResult {
  /** "peak reserved", "activations", "no new OOM". */
  name: string;
  /** "+5%", "+512.00 MiB", "none". */
  limit: string;
  baseline: number | null;
  new: number | null;
  passed: boolean;
  /** Why, in one line. */
  message: string;
}

export interface CheckResult {
  baseline: RunSummary;
  new: RunSummary;
  limits: LimitResult[];
  /** Sites whose bytes at the peak changed the most (new - baseline), largest growth first. */
  sites: { site: string; baseline: number; new: number }[];
  passed: boolean;
}

export interface CheckOptions {
  /** A PYTORCH_CUDA_ALLOC_CONF both replay under (default: each its own recorded config). */
  conf?: string;
  capacity?: Capacity | null;
}

function summarize(r: CheckedRecording, options: CheckOptions): RunSummary {
  const run = replaySnapshot(r.snapshot, {
    ...(r.trace ? { trace: r.trace } : {}),
    statsOnly: true,
    ...(options.conf !== undefined ? { conf: options.conf } : {}),
    ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
  });
  const { result, stream } = run;
  const details = r.trace?.details;
  const categories = categorize(stream, details);
  const firstOom = result.ooms[0]?.request ?? null;
  const totals = categoryTotals(stream, categories, firstOom ?? stream.length - 1);
  // Sites live when the program held the most.
  const stacks = allocationStacks(stream, details, r.snapshot);
  const live = new Map<number, number>();
  for (const b of stream.initialBlocks) if (!b.pending) live.set(b.id, b.requested);
  for (let i = 0; i <= totals.peakRequest; i++) {
    const id = stream.id[i]!;
    if (stream.failedInRecording.has(id)) continue;
    if (stream.kind[i] === RequestKind.alloc) live.set(id, stream.size[i]!);
    else live.delete(id);
  }
  const sites = new Map<string, number>();
  const siteOfKey = new Map<number, string>();
  for (const [id, bytes] of live) {
    const key = stacks.keyOf[id] ?? -1;
    let site = siteOfKey.get(key);
    if (site === undefined) siteOfKey.set(key, (site = stackSite(stacks.stackOfKey(key))));
    sites.set(site, (sites.get(site) ?? 0) + bytes);
  }
  const stats = result.stats;
  return {
    name: r.name,
    conf: configToString(run.config),
    peakReserved: stats['reserved_bytes.all.peak']!,
    peakAllocated: stats['allocated_bytes.all.peak']!,
    ooms: result.ooms.length,
    firstOom,
    churn: stats['num_device_alloc']! + stats['num_device_free']!,
    gapAtPeak: result.atPeak.reserved - result.atPeak.allocated,
    categories: Object.fromEntries(CATEGORY_KEYS.map((k, c) => [k, totals.max[c]!])) as Record<CategoryKey, number>,
    sites,
    notes: run.notes,
  };
}

const percent = (base: number, now: number): string => (base > 0 ? `${now >= base ? '+' : ''}${(((now - base) / base) * 100).toFixed(1)}%` : now > 0 ? 'new' : '0%');

function held(limit: Limit, a: RunSummary, b: RunSummary): LimitResult {
  if (limit.figure === 'no_new_oom') {
    const passed = !(a.ooms === 0 && b.ooms > 0);
    return {
      name: 'no new OOM',
      limit: 'none',
      baseline: a.firstOom,
      new: b.firstOom,
      passed,
      message: passed
        ? b.ooms > 0
          ? `both run out of memory (baseline at request ${grouped(a.firstOom!)}, new at ${grouped(b.firstOom!)})`
          : 'no OOM in the new recording'
        : `the new recording runs out of memory at request ${grouped(b.firstOom!)}; the baseline did not`,
    };
  }
  const [name, base, now] =
    limit.figure === 'category'
      ? [CATEGORY_NAMES[CATEGORY_KEYS.indexOf(limit.category)]!, a.categories[limit.category], b.categories[limit.category]]
      : limit.figure === 'peak_reserved'
        ? ['peak reserved', a.peakReserved, b.peakReserved]
        : ['peak allocated', a.peakAllocated, b.peakAllocated];
  const most = allowed(base, limit.growth);
  const passed = now <= most;
  const limitText = growthText(limit.growth, formatSize);
  return {
    name,
    limit: limitText,
    baseline: base,
    new: now,
    passed,
    message: `${name} ${formatSize(base)} -> ${formatSize(now)} (${percent(base, now)}); ${passed ? 'within' : 'past'} the limit ${limitText} (at most ${formatSize(most)})`,
  };
}

export function checkRecordings(baseline: CheckedRecording, next: CheckedRecording, limits: readonly Limit[], options: CheckOptions = {}): CheckResult {
  const a = summarize(baseline, options);
  const b = summarize(next, options);
  const results = limits.map((l) => held(l, a, b));
  const names = new Set([...a.sites.keys(), ...b.sites.keys()]);
  const sites = [...names]
    .map((site) => ({ site, baseline: a.sites.get(site) ?? 0, new: b.sites.get(site) ?? 0 }))
    .filter((s) => s.baseline !== s.new)
    .sort((x, y) => Math.abs(y.new - y.baseline) - Math.abs(x.new - x.baseline));
  return { baseline: a, new: b, limits: results, sites, passed: results.every((r) => r.passed) };
}
