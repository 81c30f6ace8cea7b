// What existed before a trace's first event (a trace that begins mid-run), rebuilt in a fresh
// allocator and device model without recording events: segments, expandable segments' mapped
// ranges, and the live blocks in them.
import type { Block } from '../../allocator/block';
import type { CachingAllocator } from '../../allocator/caching-allocator';
import type { DevicePlacement } from '../../allocator/placement/segment-placement';
import type { InitialSegment, RequestStream } from '../stream/request-stream';

/** Adopts the stream's initial state; returns the live blocks as [request id, block]. */
export function adoptInitialState(
  allocator: CachingAllocator,
  placement: DevicePlacement,
  stream: RequestStream,
): [number, Block][] {
  const ranges = new Map<string, InitialSegment[]>();
  for (const s of stream.initialSegments) {
    if (s.expandable) {
      const key = `${s.stream}/${s.small}`;
      ranges.set(key, [...(ranges.get(key) ?? []), s]);
    } else {
      placement.occupy(s.addr, s.size);
      allocator.adoptSegment(s.addr, s.size, s.stream, s.small);
    }
  }
  // One virtual range per stream and pool; assumed to start at its lowest mapped address.
  for (const group of ranges.values()) {
    group.sort((a, b) => a.addr - b.addr);
    allocator.adoptExpandableSegment(group[0]!.addr, group[0]!.stream, group[0]!.small);
    for (const r of group) allocator.adoptMapping(r.addr, r.size);
  }
  return [...stream.initialBlocks]
    .sort((x, y) => x.addr - y.addr)
    .map((b) => [b.id, allocator.adoptAllocation(b.addr, b.size, b.requested, b.id)]);
}
