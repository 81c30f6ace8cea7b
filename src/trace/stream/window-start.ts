// The state at a trace's first event, for a trace that begins mid-run (a history ring buffer, or
// recording switched on late): which segments and live blocks existed, and how large each block was.
// Every live block at the start is known: it survives to the final snapshot (its size is there) or the
// trace frees it. Free memory is the gaps between them, since free neighbours always merge. What the
// final state cannot say is where a block freed in the trace ended; the trace says it instead, as the
// first later allocation that lands right after it starts where it ended.
import { partitionPoint } from '../../lib/binary-search';
import type { AllocatorConfig } from '../../allocator/config';
import { MiB, SMALL_SIZE } from '../../allocator/constants';
import { roundSize } from '../../allocator/sizes';
import { Action } from '../../allocator/trace-action';
import type { TraceColumns } from '../snapshot/trace-columns';
import type { InitialBlock, InitialSegment } from './request-stream';

/**
 * Sizes of the blocks freed in the trace but allocated before it (size 0 until now). A block is its
 * rounded request, plus the remainder it was allocated with when that was too small to split off
 * (over 1 MiB splits in the large pool; any remainder of 512 B or more in the small pool and in
 * expandable segments; a request at or above max_split_size takes a block up to
 * max_non_split_rounding larger). Where an allocation of the trace lands within that reach, before
 * the block is freed, the block ends there; otherwise it runs to the next block (or the segment's end)
 * when the gap is too small to have been split off.
 */
export function inferInitialBlockSizes(
  blocks: InitialBlock[],
  segments: readonly InitialSegment[],
  finalSizes: ReadonlyMap<number, number>,
  config: AllocatorConfig,
  trace: TraceColumns,
): void {
  const sorted = [...blocks].sort((x, y) => x.addr - y.addr);
  const segmentsByAddr = [...segments].sort((x, y) => x.addr - y.addr);
  const segmentOf = (addr: number): InitialSegment | undefined => {
    const s = segmentsByAddr[partitionPoint(0, segmentsByAddr.length, (k) => segmentsByAddr[k]!.addr <= addr) - 1];
    return s && addr < s.addr + s.size ? s : undefined;
  };

  /** Blocks whose end the trace may show: [block, first byte it may end at, last byte, free's event]. */
  const open: { block: InitialBlock; from: number; to: number; until: number }[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const block = sorted[i]!;
    if (block.size > 0) continue;
    const known = finalSizes.get(block.addr);
    if (known !== undefined) {
      block.size = known;
      continue;
    }
    const segment = segmentOf(block.addr);
    const rounded = roundSize(block.requested, config);
    block.size = rounded;
    if (!segment || segment.small || segment.expandable) continue;
    const next = sorted[i + 1];
    const boundary = next && next.addr < segment.addr + segment.size ? next.addr : segment.addr + segment.size;
    const reach = rounded >= config.maxSplitSize ? config.maxNonSplitRounding - 1 : SMALL_SIZE;
    const to = Math.min(boundary, block.addr + rounded + reach);
    if (to <= block.addr + rounded) continue;
    // Without word from the trace: a gap too small to split off was never split off.
    if (boundary - (block.addr + rounded) <= reach) block.size = boundary - block.addr;
    open.push({ block, from: block.addr + rounded, to, until: block.source ?? trace.length });
  }
  if (open.length === 0) return;

  // The trace's word: the first allocation within a block's reach, before its free, marks its end.
  open.sort((a, b) => a.from - b.from);
  const { action, addr } = trace;
  const last = Math.max(...open.map((o) => o.until));
  let unresolved = open.length;
  for (let i = 0; i < last && unresolved > 0; i++) {
    if (action[i] !== Action.alloc) continue;
    const a = addr[i]!;
    // The open block with the greatest `from` at or below a.
    const o = open[partitionPoint(0, open.length, (k) => open[k]!.from <= a) - 1];
    if (!o || a > o.to || i >= o.until) continue;
    o.block.size = a - o.block.addr;
    o.until = -1; // settled
    unresolved--;
  }
}

/**
 * expandable_segments: the ranges mapped before the trace began. The final snapshot shows what is
 * mapped at the end; undoing the trace's maps and unmaps, last first, leaves what was there at the start.
 */
export function initialMappings(
  finalRanges: readonly { addr: number; size: number; stream: number; small: boolean; pool: number }[],
  changes: readonly { addr: number; size: number; sign: 1 | -1 }[],
): InitialSegment[] {
  let ranges: [number, number][] = finalRanges.map((s) => [s.addr, s.addr + s.size]);
  for (let i = changes.length - 1; i >= 0; i--) {
    const { addr, size, sign } = changes[i]!;
    ranges = sign > 0 ? subtractRange(ranges, addr, addr + size) : addRange(ranges, addr, addr + size);
  }
  return ranges.map(([lo, hi]) => {
    // Its pool and stream are those of the nearest final range (the same segment, as ranges of
    // different segments lie a device's memory apart); with none, the page size tells the pool.
    let nearest: (typeof finalRanges)[number] | undefined;
    for (const s of finalRanges) if (!nearest || Math.abs(s.addr - lo) < Math.abs(nearest.addr - lo)) nearest = s;
    return {
      addr: lo,
      size: hi - lo,
      stream: nearest?.stream ?? 0,
      small: nearest ? nearest.small : (hi - lo) % (20 * MiB) !== 0,
      expandable: true,
      pool: nearest?.pool ?? 0,
    };
  });
}

function subtractRange(ranges: [number, number][], lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of ranges) {
    if (b <= lo || a >= hi) out.push([a, b]);
    else {
      if (a < lo) out.push([a, lo]);
      if (b > hi) out.push([hi, b]);
    }
  }
  return out;
}

function addRange(ranges: [number, number][], lo: number, hi: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of [...ranges, [lo, hi] as [number, number]].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
