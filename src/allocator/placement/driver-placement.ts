// Where the CUDA driver puts cudaMalloc'd segments (virtual addresses), fitted to the recorded
// segment_alloc addresses of the reference traces (CUDA 13, H200, Linux). The allocator breaks ties
// by address, so a what-if replay needs addresses that behave like the driver's.
//
// The driver reserves address space in chunks of roundup(size, 32 MiB), 32 MiB aligned, from the
// process's top-down mmap area, and sub-allocates the spare room inside its chunks:
//  1. spare room first: the most recently made chunk that has a gap holding the segment, the
//     smallest such gap there (lowest on a tie), the segment at the gap's bottom;
//  2. else the highest free range left by released chunks with room for need + 32 MiB (the mmap
//     alignment slack, so an exact fit never qualifies), the chunk at its top, aligned down;
//  3. else fresh space just below everything mapped: alignDown(frontier - need, 32 MiB).
// A chunk gives its range back when its last segment goes, merging with free neighbours.
// At start the driver already holds a 512 MiB region whose only free room is 2 MiB at top - 98 MiB
// and 24 MiB at top - 24 MiB; fresh space starts below it.
// What this cannot see: other mappings of the process (host mmaps, e.g. the memory-history buffer
// when it doubles at 2^13..2^14 trace entries) sometimes take the top of a free range, so a real run
// can put a chunk lower than this model does; and what was mapped before a recording began is
// unknown, so address space the model has not seen released counts as taken.

import { MaxTree } from '../../lib/max-tree';
import { AddressReservations } from './address-reservations';
import type { DevicePlacement } from './segment-placement';
import { MiB } from '../constants';

const CHUNK = 32 * MiB;
/** A free range takes a chunk of `need` bytes when it is at least need + this: the mmap asks for
 * need + 32 MiB to align, and free ranges are whole 32 MiB units, so 32 MiB must be to spare. */
const FIT_SLACK = 30 * MiB;
const REGION = 512 * MiB;
/** The region's free room: [top - 98, top - 96) and [top - 24, top) MiB; the rest is the driver's. */
const REGION_SLOTS: readonly (readonly [number, number])[] = [
  [98 * MiB, 96 * MiB],
  [24 * MiB, 0],
];

/** The top seen in random-s1__default (0x7f781e000000); any 32 MiB-aligned address behaves the same. */
export const DEFAULT_REGION_TOP = 0x7f78_1e00_0000;

// Addresses reach ~1.4e14, past 32-bit bitwise ops: round with division (exact below 2^53).
const alignDown = (x: number, a: number): number => Math.floor(x / a) * a;
const alignUp = (x: number, a: number): number => Math.ceil(x / a) * a;

interface Chunk {
  /** Its place in creation order (DriverPlacement.chunks). */
  slot: number;
  start: number;
  end: number;
  /** Occupied ranges sorted by address: segments, plus room the driver (or an unseen owner) holds. */
  lo: number[];
  hi: number[];
  /** Which of those ranges are segments: only they are released, so a chunk holding room for
   * someone else (the driver's region, or what occupy() could not account for) is never given back. */
  seg: boolean[];
}

export class DriverPlacement implements DevicePlacement {
  /** Chunks in creation order (null: given back), and how many are live. */
  private chunks: (Chunk | null)[] = [];
  private live = 0;
  /** Each chunk's largest gap by slot: spare room is searched newest first, without a scan. */
  private readonly gaps = new MaxTree();
  /** Live chunks by the 32 MiB units they cover, each unit's in creation order: where occupy() looks. */
  private readonly byUnit = new Map<number, Chunk[]>();
  /** Chunks of more than HUGE_UNITS units, apart: a predicted run far past its recordings asks for
   * terabytes, and a map entry per 32 MiB of each would be millions (V8's maps stop at 2^24). */
  private readonly huge: Chunk[] = [];
  private readonly owner = new Map<number, Chunk>();
  /** Free ranges left by released chunks, sorted and merged: parallel arrays of [lo, hi). */
  private readonly freeLo: number[] = [];
  private readonly freeHi: number[] = [];
  /** Everything from here up is mapped or accounted for; fresh chunks go below it. */
  private frontier: number;
  /** expandable_segments' virtual ranges, in their own part of the address space. */
  private readonly reservations = new AddressReservations();

  constructor(options: { regionTop?: number } = {}) {
    const top = options.regionTop ?? DEFAULT_REGION_TOP;
    const region = this.addChunk(top - REGION, top);
    // The driver's own allocations fill the region except its two slots.
    let from = top - REGION;
    for (const [below, above] of REGION_SLOTS) {
      this.insert(region, from, top - below, false);
      from = top - above;
    }
    if (from < top) this.insert(region, from, top, false);
    this.frontier = top - REGION;
  }

  place(size: number): number {
    const slot = this.gaps.lastAtLeast(size);
    if (slot >= 0) {
      const chunk = this.chunks[slot]!;
      const addr = smallestGap(chunk, size);
      this.insert(chunk, addr, addr + size, true);
      this.owner.set(addr, chunk);
      return addr;
    }
    const need = alignUp(size, CHUNK);
    for (let i = this.freeLo.length - 1; i >= 0; i--) {
      const lo = this.freeLo[i]!;
      const hi = this.freeHi[i]!;
      const addr = alignDown(hi - need, CHUNK);
      if (hi - lo >= need + FIT_SLACK && addr >= lo) {
        this.takeFree(addr, addr + need);
        return this.newSegmentChunk(addr, need, size);
      }
    }
    const addr = alignDown(this.frontier - need, CHUNK);
    // An unaligned frontier leaves a sliver above the new chunk: it is free address space.
    if (addr + need < this.frontier) this.giveFree(addr + need, this.frontier);
    this.frontier = addr;
    return this.newSegmentChunk(addr, need, size);
  }

  release(addr: number): void {
    const chunk = this.owner.get(addr);
    if (!chunk) return;
    this.owner.delete(addr);
    const i = chunk.lo.findIndex((lo, k) => lo === addr && chunk.seg[k]);
    if (i >= 0) {
      chunk.lo.splice(i, 1);
      chunk.hi.splice(i, 1);
      chunk.seg.splice(i, 1);
      this.measureGaps(chunk);
    }
    if (chunk.lo.length > 0) return;
    this.chunks[chunk.slot] = null;
    this.gaps.set(chunk.slot, -Infinity);
    this.live--;
    if (isHuge(chunk)) this.huge.splice(this.huge.indexOf(chunk), 1);
    else {
      for (const unit of unitsOf(chunk)) {
        const list = this.byUnit.get(unit)!;
        list.splice(list.indexOf(chunk), 1);
        if (list.length === 0) this.byUnit.delete(unit);
      }
    }
    if (this.chunks.length > 64 && this.live * 2 < this.chunks.length) this.compact();
    this.giveFree(chunk.start, chunk.end);
  }

  reserve(size: number, at?: number): number {
    return this.reservations.reserve(size, at);
  }

  unreserve(addr: number): void {
    this.reservations.release(addr);
  }

  occupy(addr: number, size: number): void {
    // Only a chunk covering addr's unit can hold the range (chunks overlap only where occupy() made one
    // over a taken range).
    for (const list of [this.byUnit.get(Math.floor(addr / CHUNK)), this.huge]) {
      for (const chunk of list ?? []) {
        if (chunk.start <= addr && addr + size <= chunk.end && isFree(chunk, addr, addr + size)) {
          this.insert(chunk, addr, addr + size, true);
          this.owner.set(addr, chunk);
          return;
        }
      }
    }
    const start = alignDown(addr, CHUNK);
    const end = alignUp(addr + size, CHUNK);
    this.takeFree(start, end);
    // Space between the frontier and a chunk below it is someone's we never saw: leave it taken.
    if (start < this.frontier) this.frontier = start;
    const chunk = this.addChunk(start, end);
    // Segments sit at the bottom of a gap, so room below an unaligned one is held by something unseen.
    if (addr > start) this.insert(chunk, start, addr, false);
    this.insert(chunk, addr, addr + size, true);
    this.owner.set(addr, chunk);
  }

  private newSegmentChunk(addr: number, need: number, size: number): number {
    const chunk = this.addChunk(addr, addr + need);
    this.insert(chunk, addr, addr + size, true);
    this.owner.set(addr, chunk);
    return addr;
  }

  private addChunk(start: number, end: number): Chunk {
    const chunk: Chunk = { slot: this.chunks.length, start, end, lo: [], hi: [], seg: [] };
    this.chunks.push(chunk);
    this.live++;
    this.gaps.set(chunk.slot, end - start);
    if (isHuge(chunk)) this.huge.push(chunk);
    else {
      for (const unit of unitsOf(chunk)) {
        const list = this.byUnit.get(unit);
        if (list) list.push(chunk);
        else this.byUnit.set(unit, [chunk]);
      }
    }
    return chunk;
  }

  /** The chunk's largest gap, in `gaps`. */
  private measureGaps(chunk: Chunk): void {
    this.gaps.set(chunk.slot, largestGap(chunk));
  }

  /** Drops the slots of chunks given back (more than half of them), keeping the order. */
  private compact(): void {
    this.chunks = this.chunks.filter((c) => c !== null);
    this.gaps.clear();
    this.chunks.forEach((chunk, slot) => {
      chunk!.slot = slot;
      this.measureGaps(chunk!);
    });
  }

  private insert(chunk: Chunk, lo: number, hi: number, seg: boolean): void {
    let i = chunk.lo.length;
    while (i > 0 && chunk.lo[i - 1]! > lo) i--;
    chunk.lo.splice(i, 0, lo);
    chunk.hi.splice(i, 0, hi);
    chunk.seg.splice(i, 0, seg);
    this.measureGaps(chunk);
  }

  /** Removes [lo, hi) from the free ranges (a chunk was placed or found there). */
  private takeFree(lo: number, hi: number): void {
    for (let i = this.freeLo.length - 1; i >= 0; i--) {
      const a = this.freeLo[i]!;
      const b = this.freeHi[i]!;
      if (b <= lo || a >= hi) continue;
      const keepBelow = a < lo;
      const keepAbove = b > hi;
      this.freeLo.splice(i, 1, ...(keepBelow ? [a] : []), ...(keepAbove ? [hi] : []));
      this.freeHi.splice(i, 1, ...(keepBelow ? [lo] : []), ...(keepAbove ? [b] : []));
    }
  }

  /** Adds [lo, hi) to the free ranges, merging neighbours; a range reaching the frontier joins fresh space. */
  private giveFree(lo: number, hi: number): void {
    let i = 0;
    while (i < this.freeLo.length && this.freeHi[i]! < lo) i++;
    let j = i;
    while (j < this.freeLo.length && this.freeLo[j]! <= hi) {
      lo = Math.min(lo, this.freeLo[j]!);
      hi = Math.max(hi, this.freeHi[j]!);
      j++;
    }
    this.freeLo.splice(i, j - i, lo);
    this.freeHi.splice(i, j - i, hi);
    if (i === 0 && lo <= this.frontier) {
      this.frontier = Math.max(this.frontier, hi);
      this.freeLo.shift();
      this.freeHi.shift();
    }
  }
}

/** The 32 MiB units a chunk covers. */
/** 32 GiB: a chunk larger than this is kept out of byUnit. */
const HUGE_UNITS = 1024;
const isHuge = (chunk: Chunk): boolean => chunk.end - chunk.start > HUGE_UNITS * CHUNK;

function* unitsOf(chunk: Chunk): Generator<number> {
  for (let unit = Math.floor(chunk.start / CHUNK); unit * CHUNK < chunk.end; unit++) yield unit;
}

/** Bottom of the smallest gap in `chunk` that holds `size` (lowest on a tie); the caller checked one exists. */
function smallestGap(chunk: Chunk, size: number): number {
  let best = -1;
  let bestLen = Infinity;
  let from = chunk.start;
  const n = chunk.lo.length;
  for (let i = 0; i <= n; i++) {
    const to = i < n ? chunk.lo[i]! : chunk.end;
    const len = to - from;
    if (len >= size && len < bestLen) {
      best = from;
      bestLen = len;
    }
    if (i < n) from = Math.max(from, chunk.hi[i]!);
  }
  return best;
}

function largestGap(chunk: Chunk): number {
  let largest = 0;
  let from = chunk.start;
  const n = chunk.lo.length;
  for (let i = 0; i <= n; i++) {
    const to = i < n ? chunk.lo[i]! : chunk.end;
    largest = Math.max(largest, to - from);
    if (i < n) from = Math.max(from, chunk.hi[i]!);
  }
  return largest;
}

function isFree(chunk: Chunk, lo: number, hi: number): boolean {
  for (let i = 0; i < chunk.lo.length; i++) if (chunk.lo[i]! < hi && lo < chunk.hi[i]!) return false;
  return true;
}

/**
 * The driver region's top inferred from a recording's first segment addresses (and/or pre-existing
 * segments): the first segments land in the region's slots, a small one (<= 24 MiB) at top - 24 MiB
 * or a 2 MiB one at top - 98 MiB, which puts them 8 or 30 MiB past a 32 MiB boundary.
 */
export function inferRegionTop(
  segmentAllocs: readonly { addr: number; size: number }[],
  preexisting: readonly { addr: number; size: number }[] = [],
): number | undefined {
  // Only the earliest allocations: later ones at those offsets are spare room in ordinary chunks.
  for (const { addr, size } of [...preexisting, ...segmentAllocs.slice(0, 4)]) {
    const offset = addr - alignDown(addr, CHUNK);
    if (size <= 24 * MiB && offset === 8 * MiB) return addr + 24 * MiB;
    if (size === 2 * MiB && offset === 30 * MiB) return addr + 98 * MiB;
  }
  return undefined;
}

/** The driver placement model, its first region where a recording's first segments show it
 * (`recorded`: its cudaMalloc calls in order; `preexisting`: cudaMalloc'd segments made before it began). */
export function driverPlacementFor(
  recorded: readonly { addr: number; size: number }[],
  preexisting: readonly { addr: number; size: number }[],
  regionTop?: number,
): DriverPlacement {
  const top = regionTop ?? inferRegionTop(recorded, preexisting);
  return new DriverPlacement(top !== undefined ? { regionTop: top } : {});
}
