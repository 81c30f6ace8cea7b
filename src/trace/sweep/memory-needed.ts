// The memory a run needs, and which of the usual cards holds it ("which card do I need for batch 64"):
// its peak reserved, and each card's memory as the cap, replayed. Under a cap the allocator frees its
// cache and retries before it fails, so a run can fit a card smaller than its uncapped peak reserved;
// a card at or above that peak always fits (a cap never reached changes no decision, unless
// garbage_collection_threshold, which is relative to the cap, is set) and one below the peak
// allocated never does, so only the cards between are replayed.
import { CARDS, type Capacity } from '../../allocator/capacity';
import { MiB } from '../../allocator/constants';
import { formatSize } from '../../allocator/format-size';
import type { AllocatorConfig } from '../../allocator/config';
import { replay, type ReplayOptions } from '../replay/replay';
import type { RequestStream } from '../stream/request-stream';

export interface CardFit {
  name: string;
  bytes: number;
  fits: boolean;
  /** Less memory than the run's peak allocated: it cannot fit, and was not replayed. */
  belowAllocated: boolean;
  /** The first OOM's request under this card's memory as the cap (null: none, or not replayed). */
  firstOom: number | null;
}

export interface MemoryNeeded {
  /** Peaks of the uncapped run. */
  peakReserved: number;
  peakAllocated: number;
  cards: CardFit[];
}

/** `uncapped`: the stats of the stream's uncapped replay under `config`, where the caller has them. */
export function memoryNeeded(stream: RequestStream, config: AllocatorConfig, uncapped?: Record<string, number>): MemoryNeeded {
  const stats = uncapped ?? replay(stream, { config, addresses: 'simulated', statsOnly: true }).stats;
  const peakReserved = stats['reserved_bytes.all.peak']!;
  const peakAllocated = stats['allocated_bytes.all.peak']!;
  const capMatters = config.garbageCollectionThreshold > 0;
  const cards = CARDS.map(({ name, bytes }) => {
    const belowAllocated = bytes < peakAllocated;
    let firstOom: number | null = null;
    if (!belowAllocated && (bytes < peakReserved || capMatters)) {
      const capacity: Capacity = { kind: 'fraction', bytes };
      firstOom = replay(stream, { config, addresses: 'simulated', capacity, statsOnly: true, untilOom: true }).ooms[0]?.request ?? null;
    }
    return { name, bytes, fits: !belowAllocated && firstOom === null, belowAllocated, firstOom };
  });
  return { peakReserved, peakAllocated, cards };
}

/**
 * The smallest cap, to 2 MiB (a large segment's granule), under which `stream` runs without an OOM,
 * given a cap it runs out under (`failsUnder`): what a size just past the largest that fits would
 * need, so a user can judge how near the cap it came. A run that runs out says the cap its failing
 * cudaMalloc needed; where the cap refused nothing before, the run up to there is the uncapped one under
 * every larger cap too, so every cap below that need fails there, and the need is the next to try (the
 * first run's need is tried even where unproven: the answer lies mostly a few MiB past it). Else the
 * caps tried grow from the last that failed by 2 MiB, 4, 8, ..., and what is left between the last that
 * failed and the first that fit is bisected. A cap at the uncapped peak reserved always fits, unless
 * garbage_collection_threshold makes the cap matter: then the search bisects up to that peak, and null
 * where it does not fit.
 * `options`: how the run replays (config, addresses, inserted calls), as the search that found it failing.
 */
export function smallestCap(stream: RequestStream, options: ReplayOptions, failsUnder: number): number | null {
  const { capacity: _, ...uncapped } = options;
  const oomUnder = (bytes: number) => replay(stream, { ...uncapped, capacity: { kind: 'fraction', bytes }, statsOnly: true, untilOom: true }).ooms[0];
  // lo: a cap known to run out; fits: one known not to.
  let lo = failsUnder;
  let fits: number;
  if ((options.config?.garbageCollectionThreshold ?? 0) > 0) {
    const peak = replay(stream, { ...uncapped, statsOnly: true }).stats['reserved_bytes.all.peak']!;
    fits = Math.max(peak, lo + CAP_STEP);
    if (oomUnder(fits)) return null;
  } else {
    let oom = oomUnder(lo);
    if (!oom) return lo;
    for (let k = 0, first = true; ; first = false) {
      let next: number;
      if (!oom.capRefusedBefore && oom.capNeeded > lo) {
        lo = oom.capNeeded - 1;
        next = oom.capNeeded;
        k = 0;
      } else if (first && oom.capNeeded > lo) next = oom.capNeeded;
      else next = lo + CAP_STEP * 2 ** k++;
      if (!Number.isSafeInteger(next)) return null;
      oom = oomUnder(next);
      if (!oom) {
        fits = next;
        break;
      }
      lo = next;
    }
  }
  while (fits - lo > CAP_STEP) {
    const mid: number = lo + Math.max(1, Math.floor((fits - lo) / 2 / CAP_STEP)) * CAP_STEP;
    if (oomUnder(mid)) lo = mid;
    else fits = mid;
  }
  return fits;
}

const CAP_STEP = 2 * MiB;

/** ": it needs 2.29 GiB, 0.13% over the cap": said of the first size that runs out (empty when unknown). */
export function smallestCapText(needs: number | null, cap: number): string {
  if (needs === null) return '';
  const over = ((needs - cap) / cap) * 100;
  return `: it needs ${formatSize(needs)}, ${over < 0.1 ? over.toFixed(2) : over < 10 ? over.toFixed(1) : over.toFixed(0)}% over the cap`;
}
