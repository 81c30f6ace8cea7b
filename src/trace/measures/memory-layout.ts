// The allocator's memory at one moment, as flat columns for the segment map: every segment and,
// inside it, every block with its state. Columns (not objects) so that a million blocks cross from
// the worker to the page as a few transferable buffers and go straight into GPU instance buffers.
import type { CachingAllocator } from '../../allocator/caching-allocator';

export const enum BlockState {
  allocated = 0,
  /** Cached free, inside a segment that also holds other blocks (a split segment). */
  cachedSplit = 1,
  /** Cached free and the whole segment: empty_cache would return it to the device. */
  freeSegment = 2,
  /** Freed by the program, not yet reusable (waiting on CUDA events); recorded traces only. */
  pendingFree = 3,
}

export const BLOCK_STATE_NAMES = ['allocated', 'cached free (split segment)', 'free segment', 'pending free'] as const;

export interface MemoryLayout {
  /** Segments ordered by pool (the default pools first, large before small), then stream, then address. */
  segmentAddr: Float64Array;
  segmentSize: Float64Array;
  segmentStream: Float64Array;
  /** 1 for the small pool (segments of 2 MiB for requests up to 1 MiB). */
  segmentSmall: Uint8Array;
  /** 0: the default pools; else a private pool, named by poolNames[k]. */
  segmentPool: Int32Array;
  /** Index of each segment's first block; blocks of a segment are contiguous, in address order. */
  segmentFirstBlock: Int32Array;
  blockAddr: Float64Array;
  blockSize: Float64Array;
  /** Bytes the program asked for (0 for a free block). */
  blockRequested: Float64Array;
  blockState: Uint8Array;
  /** 1 when the block is at or above max_split_size: never split, only taken whole. */
  blockOversize: Uint8Array;
  /** The request stream's logical id of the allocation (-1 for free blocks). */
  blockId: Int32Array;
  /** Request index at which the allocation was made (-1 for free blocks or when unknown). */
  blockSince: Int32Array;
  /** The allocator's max_split_size in bytes (Infinity when unlimited). */
  maxSplitSize: number;
  /** Names of the pools by index ('' for the default pools), e.g. 'private pool (0, 1)'. */
  poolNames: string[];
}

/**
 * The layout of `allocator` now. `allocatedAt(id)` gives the request index of an allocation's alloc
 * (for its age), or -1.
 */
export function memoryLayout(allocator: CachingAllocator, allocatedAt: (id: number) => number, poolNames: string[] = ['']): MemoryLayout {
  const segments = allocator
    .segmentsByAddress()
    .sort((a, b) => a.segment.pool - b.segment.pool || Number(a.small) - Number(b.small) || a.stream - b.stream || a.addr - b.addr);
  let blocks = 0;
  // A segment's blocks run while mapped (an expandable segment's range ends at unmapped space).
  for (const s of segments) for (let b: typeof s.head | null = s.head; b?.mapped; b = b.next) blocks++;
  const layout = emptyLayout(segments.length, blocks, allocator.config.maxSplitSize, poolNames);
  let k = 0;
  segments.forEach((s, i) => {
    layout.segmentAddr[i] = s.addr;
    layout.segmentSize[i] = s.size;
    layout.segmentStream[i] = s.stream;
    layout.segmentSmall[i] = s.small ? 1 : 0;
    layout.segmentPool[i] = s.segment.pool;
    layout.segmentFirstBlock[i] = k;
    const whole = !s.head.next?.mapped;
    for (let b: typeof s.head | null = s.head; b?.mapped; b = b.next, k++) {
      layout.blockAddr[k] = b.addr;
      layout.blockSize[k] = b.size;
      layout.blockRequested[k] = b.allocated ? b.requestedSize : 0;
      layout.blockState[k] = b.pending ? BlockState.pendingFree : b.allocated ? BlockState.allocated : whole ? BlockState.freeSegment : BlockState.cachedSplit;
      layout.blockOversize[k] = b.size >= layout.maxSplitSize ? 1 : 0;
      layout.blockId[k] = b.allocated ? b.tag : -1;
      layout.blockSince[k] = b.allocated ? allocatedAt(b.tag) : -1;
    }
  });
  return layout;
}

/** A layout of `segments` segments and `blocks` blocks, all zero, to fill in. */
export function emptyLayout(segments: number, blocks: number, maxSplitSize: number, poolNames: string[] = ['']): MemoryLayout {
  return {
    segmentAddr: new Float64Array(segments),
    segmentSize: new Float64Array(segments),
    segmentStream: new Float64Array(segments),
    segmentSmall: new Uint8Array(segments),
    segmentPool: new Int32Array(segments),
    segmentFirstBlock: new Int32Array(segments),
    blockAddr: new Float64Array(blocks),
    blockSize: new Float64Array(blocks),
    blockRequested: new Float64Array(blocks),
    blockState: new Uint8Array(blocks),
    blockOversize: new Uint8Array(blocks),
    blockId: new Int32Array(blocks),
    blockSince: new Int32Array(blocks),
    maxSplitSize,
    poolNames,
  };
}

/** The buffers of a layout, to transfer rather than copy between threads. */
export function layoutBuffers(layout: MemoryLayout): ArrayBuffer[] {
  return Object.values(layout)
    .filter((v): v is Float64Array | Int32Array | Uint8Array => ArrayBuffer.isView(v))
    .map((v) => v.buffer as ArrayBuffer);
}

/** The streams that have segments in `layout`, ascending. */
export function layoutStreams(layout: MemoryLayout): number[] {
  return [...new Set(layout.segmentStream)].sort((a, b) => a - b);
}

/** Only the segments (and their blocks) of one stream. */
export function layoutOfStream(layout: MemoryLayout, stream: number): MemoryLayout {
  const segments: number[] = [];
  let blocks = 0;
  const n = layout.segmentAddr.length;
  const end = (i: number): number => (i + 1 < n ? layout.segmentFirstBlock[i + 1]! : layout.blockAddr.length);
  for (let i = 0; i < n; i++) {
    if (layout.segmentStream[i] !== stream) continue;
    segments.push(i);
    blocks += end(i) - layout.segmentFirstBlock[i]!;
  }
  const out = emptyLayout(segments.length, blocks, layout.maxSplitSize, layout.poolNames);
  let k = 0;
  segments.forEach((i, j) => {
    out.segmentAddr[j] = layout.segmentAddr[i]!;
    out.segmentSize[j] = layout.segmentSize[i]!;
    out.segmentStream[j] = stream;
    out.segmentSmall[j] = layout.segmentSmall[i]!;
    out.segmentPool[j] = layout.segmentPool[i]!;
    out.segmentFirstBlock[j] = k;
    for (let b = layout.segmentFirstBlock[i]!; b < end(i); b++, k++) {
      out.blockAddr[k] = layout.blockAddr[b]!;
      out.blockSize[k] = layout.blockSize[b]!;
      out.blockRequested[k] = layout.blockRequested[b]!;
      out.blockState[k] = layout.blockState[b]!;
      out.blockOversize[k] = layout.blockOversize[b]!;
      out.blockId[k] = layout.blockId[b]!;
      out.blockSince[k] = layout.blockSince[b]!;
    }
  });
  return out;
}
