// expandable_segments' arithmetic (ExpandableSegment in c10/cuda/CUDACachingAllocator.cpp): each
// stream and pool gets one virtual range of 1 1/8 times the device's memory, mapped onto physical
// memory in pages of 2 MiB (small pool) or large_segment_size (large pool) as requests need them.
import type { Block, Segment } from './block';
import { LARGE_BUFFER, SMALL_BUFFER } from './constants';

/** The mapping granularity: 2 MiB in the small pool, large_segment_size (20 MiB by default) in the large. */
export function pageSizeFor(small: boolean, largeSegmentSize = LARGE_BUFFER): number {
  return small ? SMALL_BUFFER : largeSegmentSize;
}

/** The virtual range reserved per segment: enough pages for 1 1/8 of the device's memory. */
export function reservedRangeSize(deviceTotal: number, pageSize: number): number {
  return Math.ceil((deviceTotal + Math.floor(deviceTotal / 8)) / pageSize) * pageSize;
}

/** [lo, hi): the pages a map of [addr, addr + size) maps (every page it touches). */
export function pagesCovering(segment: Segment, addr: number, size: number): [number, number] {
  const page = segment.pageSize;
  const lo = segment.addr + Math.floor((addr - segment.addr) / page) * page;
  const hi = segment.addr + Math.ceil((addr + size - segment.addr) / page) * page;
  return [lo, hi];
}

/** [lo, hi): the pages wholly inside [addr, addr + size), what unmapping a free block gives back (may be empty). */
export function pagesInside(segment: Segment, addr: number, size: number): [number, number] {
  const page = segment.pageSize;
  const lo = segment.addr + Math.ceil((addr - segment.addr) / page) * page;
  const hi = segment.addr + Math.floor((addr + size - segment.addr) / page) * page;
  return [lo, hi];
}

/** A pool's unmapped blocks ordered by (stream, address), as PyTorch's BlockPool::unmapped. Few: one
 * tail per segment, plus holes that an OOM unmapped. */
export class UnmappedBlocks {
  private readonly blocks: Block[] = [];

  insert(block: Block): void {
    let i = this.blocks.length;
    while (i > 0 && before(block, this.blocks[i - 1]!)) i--;
    this.blocks.splice(i, 0, block);
  }

  delete(block: Block): void {
    const i = this.blocks.indexOf(block);
    if (i >= 0) this.blocks.splice(i, 1);
  }

  /** The unmapped blocks of `stream`, lowest address first (a copy). */
  onStream(stream: number): Block[] {
    return this.blocks.filter((b) => b.stream === stream);
  }
}

function before(a: Block, b: Block): boolean {
  return a.stream < b.stream || (a.stream === b.stream && a.addr < b.addr);
}
