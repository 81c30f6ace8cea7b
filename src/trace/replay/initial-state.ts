// What existed before a trace's first event (a trace that begins mid-run), rebuilt in a fresh
// allocator and device model without recording events: segments, expandable segments' mapped
// ranges, and the live blocks in them (some freed already and pending, under record_stream).
// A piece the rest contradicts (a block no segment holds, two blocks on one range) is left out and
// said, rather than stopping the replay: the trace's other events still replay.
import type { Block } from '../../allocator/block';
import type { CachingAllocator } from '../../allocator/caching-allocator';
import type { DevicePlacement } from '../../allocator/placement/segment-placement';
import type { InitialSegment, RequestStream } from '../stream/request-stream';

export interface AdoptedState {
  /** The live blocks as [request id, block]. */
  blocks: [number, Block][];
  /** What could not be adopted, and why, for the user. */
  problems: string[];
}

/** Adopts the stream's initial state. */
export function adoptInitialState(allocator: CachingAllocator, placement: DevicePlacement, stream: RequestStream): AdoptedState {
  const problems: string[] = [];
  const ranges = new Map<string, InitialSegment[]>();
  for (const s of stream.initialSegments) {
    if (s.expandable) {
      const key = `${s.stream}/${s.small}`;
      ranges.set(key, [...(ranges.get(key) ?? []), s]);
      continue;
    }
    try {
      allocator.adoptSegment(s.addr, s.size, s.stream, s.small, s.pool ?? 0);
      placement.occupy(s.addr, s.size);
    } catch (e) {
      problems.push(`the segment at ${s.addr} (${s.size} bytes) that existed before the trace began could not be placed: ${(e as Error).message}`);
    }
  }
  // One virtual range per stream and pool; assumed to start at its lowest mapped address.
  for (const group of ranges.values()) {
    group.sort((a, b) => a.addr - b.addr);
    allocator.adoptExpandableSegment(group[0]!.addr, group[0]!.stream, group[0]!.small);
    for (const r of group) allocator.adoptMapping(r.addr, r.size);
  }
  const blocks: [number, Block][] = [];
  for (const b of [...stream.initialBlocks].sort((x, y) => x.addr - y.addr)) {
    try {
      blocks.push([b.id, allocator.adoptAllocation(b.addr, b.size, b.requested, b.id, b.pending ?? false)]);
    } catch (e) {
      const where = b.source !== undefined ? ` (freed by trace entry ${b.source})` : '';
      problems.push(`the block at ${b.addr}${where}, allocated before the trace began, is left out: ${(e as Error).message}`);
    }
  }
  return { blocks, problems };
}
