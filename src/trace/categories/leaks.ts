// Suspected leaks: allocation sites whose live blocks, counted at the start of each step, grow step
// after step ("+12 MiB a step from train.py:88"). A leak keeps one more block each step (a list that
// appends a tensor per step); a block that is only larger each step (a growing batch) is not one, and a
// warm-up that settles (optimizer state made in the first step, a library's workspace) stops growing.
import type { AllocationStacks } from '../measures/allocation-stacks';
import { stackPath } from '../measures/memory-by-stack';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { CATEGORY_COUNT, type Categories } from './categories';

export interface SuspectedLeak {
  /** The innermost frame shown (as the stack view names a site), and its whole path, outermost first. */
  site: string;
  frames: string[];
  /** The Category most of its live bytes are in, at the last step's start. */
  category: number;
  /** Growth per step, from the second step's start to the last's. */
  bytesPerStep: number;
  blocksPerStep: number;
  /** Its live bytes at each step's start. */
  bytesAtStart: number[];
}

/** At least this many step starts (the first is left out as the warm-up's). */
const MIN_STEPS = 4;
/** The share of steps after which the site's block count must have grown. */
const GROWING = 0.75;

/** `starts`: the steps' first requests (steps.ts's stepStarts). */
export function suspectedLeaks(stream: RequestStream, categories: Categories, stacks: AllocationStacks, starts: readonly number[]): SuspectedLeak[] {
  if (starts.length < MIN_STEPS) return [];
  // Sites by stack key; per site, live blocks, bytes and bytes by category.
  const siteOfKey = new Map<number, number>();
  const sites: { site: string; frames: string[]; count: number; bytes: number; byCategory: Float64Array; counts: number[]; bytesAt: number[]; byCategoryAtLast: Float64Array | null }[] = [];
  const bySiteName = new Map<string, number>();
  const siteOf = (id: number): number => {
    const key = stacks.keyOf[id] ?? -1;
    let s = siteOfKey.get(key);
    if (s === undefined) {
      const frames = stackPath(stacks.stackOfKey(key));
      const site = frames[frames.length - 1]!;
      s = bySiteName.get(site);
      if (s === undefined) {
        bySiteName.set(site, (s = sites.length));
        sites.push({ site, frames, count: 0, bytes: 0, byCategory: new Float64Array(CATEGORY_COUNT), counts: [], bytesAt: [], byCategoryAtLast: null });
      }
      siteOfKey.set(key, s);
    }
    return s;
  };
  let k = 0;
  const sample = (): void => {
    for (const s of sites) {
      s.counts[k] = s.count;
      s.bytesAt[k] = s.bytes;
      if (k === starts.length - 1) s.byCategoryAtLast = s.byCategory.slice();
    }
    k++;
  };
  for (let i = 0; i < stream.length && k < starts.length; i++) {
    while (k < starts.length && starts[k] === i) sample();
    const id = stream.id[i]!;
    if (stream.failedInRecording.has(id)) continue;
    const s = sites[siteOf(id)]!;
    const sign = stream.kind[i] === RequestKind.alloc ? 1 : -1;
    s.count += sign;
    s.bytes += sign * stream.size[i]!;
    s.byCategory[categories.of[id]!]! += sign * stream.size[i]!;
  }
  const n = starts.length;
  const out: SuspectedLeak[] = [];
  for (const s of sites) {
    const counts = Array.from({ length: n }, (_, j) => s.counts[j] ?? 0);
    const bytes = Array.from({ length: n }, (_, j) => s.bytesAt[j] ?? 0);
    let grew = 0;
    for (let j = 2; j < n; j++) if (counts[j]! > counts[j - 1]!) grew++;
    const intervals = n - 2;
    if (grew < GROWING * intervals || counts[n - 1]! < counts[n - 2]! || bytes[n - 1]! <= bytes[1]!) continue;
    const byCategory = s.byCategoryAtLast ?? s.byCategory;
    out.push({
      site: s.site,
      frames: s.frames,
      category: byCategory.indexOf(Math.max(...byCategory)),
      bytesPerStep: (bytes[n - 1]! - bytes[1]!) / intervals,
      blocksPerStep: (counts[n - 1]! - counts[1]!) / intervals,
      bytesAtStart: bytes,
    });
  }
  return out.sort((a, b) => b.bytesPerStep - a.bytesPerStep);
}
