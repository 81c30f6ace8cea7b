// The fixes worth trying for a run's OOM (or its peak), each replayed on the run's own requests and
// listed only where the replay avoids the OOM or moves it later (with no OOM: lowers the peak):
//   setting      the tuning guide's settings, each on top of the config asked for;
//   empty_cache  torch.cuda.empty_cache() before each step's forward (the cache returned between steps);
//   size         (a predicted run) the largest size whose predicted run fits (smallerSizeFix);
//   free_earlier an allocation site whose blocks outlive the step that made them (activations, input,
//                other: not what is meant to, parameters, gradients, optimizer state), freed at that
//                step's end, as a `del` there would (a list that keeps a tensor per step, last step's input).
// Ranked as the tuning guide ranks runs (rank-runs.ts): no OOM first, then the later OOM, then less
// peak reserved memory. Request numbers are the recording's.
import type { Capacity } from '../../allocator/capacity';
import { configToString, type AllocatorConfig } from '../../allocator/config';
import { MiB } from '../../allocator/constants';
import { formatSize } from '../../allocator/format-size';
import { grouped } from '../../lib/grouped';
import { partitionPoint } from '../../lib/binary-search';
import type { AllocationStacks } from '../measures/allocation-stacks';
import { stackSite } from '../measures/memory-by-stack';
import { oomOutcome, coverageOf } from '../replay/coverage';
import { replay, type ReplayResult } from '../replay/replay';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { editStream, type InsertedFree } from '../stream/stream-edit';
import { compareRuns, runFigures, type RunFigures } from '../sweep/rank-runs';
import { guideCandidates } from '../sweep/tuning-guide';
import { largestFit } from '../predict/largest-fit';
import { Category, CATEGORY_NAMES, type Categories } from '../categories/categories';
import type { Step } from '../categories/steps';

export type FixKind = 'setting' | 'empty_cache' | 'free_earlier' | 'size';

export interface Fix {
  kind: FixKind;
  /** The change in words a user acts on: a PYTORCH_CUDA_ALLOC_CONF, or a line of code to add. */
  change: string;
  /** A setting's whole PYTORCH_CUDA_ALLOC_CONF. */
  conf?: string;
  /** The replay with the fix (first OOM in the recording's request numbers). */
  result: RunFigures;
  /** What it did, as far as the recording reaches: "no OOM through request N, where ...", "OOM 1,204 requests later". */
  outcome: string;
}

export interface FixOptions {
  config: AllocatorConfig;
  capacity?: Capacity;
  /** The run the fixes are set against, and the moment explained (its first OOM, or its peak). */
  baseline: ReplayResult;
  moment: number;
}

/** The max_split_size values tried for the guide's max_split candidate (MiB). */
const MAX_SPLITS = [64, 128, 256, 512, 1024];
/** The allocation sites tried for free_earlier, the most bytes kept across steps at the moment first. */
const SITES = 3;

export function fixesFor(stream: RequestStream, categories: Categories, stacks: AllocationStacks, found: readonly Step[], options: FixOptions): Fix[] {
  const { config, capacity, baseline } = options;
  const coverage = coverageOf(stream);
  const base = { addresses: 'simulated' as const, statsOnly: true, ...(capacity ? { capacity } : {}) };
  const figures = (r: ReplayResult, firstOom = r.ooms[0]?.request ?? null): RunFigures => runFigures(r.stats, firstOom);
  const before = figures(baseline);
  const tried: Omit<Fix, 'outcome'>[] = [];

  // Settings: the guide's, its max_split candidate the best of a few values below the largest request.
  let largestRequest = 0;
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) largestRequest = Math.max(largestRequest, stream.size[i]!);
  const splits = MAX_SPLITS.filter((m) => m * MiB < largestRequest && m * MiB >= config.largeSegmentSize && m * MiB !== config.maxSplitSize);
  let bestSplit: { mib: number; figures: RunFigures } | null = null;
  for (const mib of splits) {
    const f = figures(replay(stream, { ...base, config: { ...config, maxSplitSize: mib * MiB } }));
    if (!bestSplit || compareRuns(f, bestSplit.figures) < 0) bestSplit = { mib, figures: f };
  }
  const facts = { largestRequest, distinctSizes: 0, capacity: capacity ?? null, coverage };
  for (const c of guideCandidates(config, bestSplit?.mib ?? null, facts)) {
    const f = c.kind === 'max_split' && bestSplit ? bestSplit.figures : figures(replay(stream, { ...base, config: c.config }));
    const conf = configToString(c.config);
    tried.push({ kind: 'setting', change: `PYTORCH_CUDA_ALLOC_CONF=${conf}`, conf, result: f });
  }

  // empty_cache() before each step's forward.
  const starts = found.map((s) => s.start).filter((s) => s > 0);
  if (starts.length > 0) {
    const r = replay(stream, { ...base, config, emptyCacheAfter: starts.map((s) => s - 1) });
    tried.push({ kind: 'empty_cache', change: "torch.cuda.empty_cache() at the start of each step (before the model's forward)", result: figures(r) });
  }

  // Sites whose blocks outlive their step, freed at its end.
  for (const site of keptSites(stream, categories, stacks, found, options.moment).slice(0, SITES)) {
    const { stream: edited, origin } = editStream(stream, site.edit);
    const r = replay(edited, { ...base, config });
    const first = r.ooms[0] ? origin[r.ooms[0].request]! : null;
    tried.push({
      kind: 'free_earlier',
      change: `free what ${site.site} allocates (${CATEGORY_NAMES[site.category]}) at the end of the step that made it (del, or keep a .item() instead of the tensor)`,
      result: figures(r, first),
    });
  }

  const fixes: Fix[] = [];
  for (const t of tried) {
    const a = t.result;
    const b = before;
    let outcome: string | null = null;
    if (b.first_oom_request !== null) {
      if (a.first_oom_request === null) outcome = oomOutcome(null, coverage);
      else if (a.first_oom_request > b.first_oom_request) outcome = `${oomOutcome(a.first_oom_request, coverage)}, ${grouped(a.first_oom_request - b.first_oom_request)} requests later`;
    } else if (a.first_oom_request === null && a['reserved_bytes.all.peak'] < 0.99 * b['reserved_bytes.all.peak']) {
      outcome = `no OOM, ${formatSize(b['reserved_bytes.all.peak'] - a['reserved_bytes.all.peak'])} less reserved at the peak`;
    }
    if (outcome !== null) fixes.push({ ...t, outcome });
  }
  return fixes.sort((x, y) => compareRuns(x.result, y.result));
}

/** Sites with blocks alive at `moment` that an earlier step made, the most such bytes first, each with
 * the edit that frees every block of the site that outlives its step at that step's end. */
function keptSites(stream: RequestStream, categories: Categories, stacks: AllocationStacks, found: readonly Step[], moment: number) {
  if (found.length < 2) return [];
  // The step a request is in (-1: before the first).
  const stepOf = (i: number): number => partitionPoint(0, found.length, (k) => found[k]!.start <= i) - 1;
  const madeAt = new Int32Array(stream.idCount).fill(-1);
  const freedAt = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc) madeAt[stream.id[i]!] = i;
    else freedAt[stream.id[i]!] = i;
  }
  const momentStep = stepOf(moment);
  const bySite = new Map<string, { site: string; bytes: number; category: number; ids: number[] }>();
  for (let id = 0; id < stream.idCount; id++) {
    const a = madeAt[id]!;
    if (a < 0 || stream.failedInRecording.has(id)) continue;
    const step = stepOf(a);
    if (step < 0 || step + 1 >= found.length) continue;
    const f = freedAt[id]!;
    const end = found[step + 1]!.start;
    if (f >= 0 && f < end) continue; // freed within its step
    if (f >= 0 && stream.kind[f] === RequestKind.freeDeferred) continue; // another stream's use decides
    // Parameters, gradients and optimizer state are meant to outlive a step.
    const category = categories.of[id]!;
    if (category !== Category.activation && category !== Category.input && category !== Category.other) continue;
    const site = stackSite(stacks.stackOf(id));
    let s = bySite.get(site);
    if (!s) bySite.set(site, (s = { site, bytes: 0, category, ids: [] }));
    s.ids.push(id);
    // Kept at the moment: made in an earlier step, not freed by then.
    if (step < momentStep && a <= moment && (f < 0 || f > moment)) s.bytes += stream.size[a]!;
  }
  return [...bySite.values()]
    .filter((s) => s.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .map((s) => {
      const drop = new Set<number>();
      const freesBefore = new Map<number, InsertedFree[]>();
      for (const id of s.ids) {
        const a = madeAt[id]!;
        const end = found[stepOf(a) + 1]!.start;
        if (freedAt[id]! >= 0) drop.add(freedAt[id]!);
        let list = freesBefore.get(end);
        if (!list) freesBefore.set(end, (list = []));
        list.push({ id, size: stream.size[a]!, stream: stream.stream[a]! });
      }
      return { site: s.site, category: s.category, edit: { drop, freesBefore } };
    });
}

/**
 * For a predicted run that runs out of memory at `current` (a batch, a sequence length): the largest
 * smaller size whose predicted run fits, `runAt` replaying the run at a size under the same config and
 * cap, `fits` judging it (default: no OOM in that replay; a predicted run near a cap is judged under its
 * address layouts). Null when even size 1 runs out.
 */
export function smallerSizeFix(current: number, runAt: (size: number) => ReplayResult, fits = (size: number): boolean => runAt(size).ooms.length === 0): Fix | null {
  const top = Math.ceil(current) - 1;
  if (top < 1) return null;
  const fit = largestFit(fits, top, top);
  if (fit.largest === null) return null;
  const r = runAt(fit.largest);
  return {
    kind: 'size',
    change: `size ${grouped(fit.largest)} instead of ${grouped(current)}: the largest whose predicted run fits`,
    result: runFigures(r.stats, r.ooms[0]?.request ?? null),
    outcome:
      `${r.ooms.length === 0 ? 'no OOM' : 'no OOM under most address layouts'} at size ${grouped(fit.largest)} ` +
      `(${fit.firstFailing !== null ? `${grouped(fit.firstFailing)} runs out of memory` : 'predicted'})`,
  };
}
