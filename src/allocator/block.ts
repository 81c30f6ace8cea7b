import type { Copier } from '../lib/fork';

/**
 * A segment: one cudaMalloc'd range tiled by blocks, or (expandable_segments) one reserved virtual
 * range whose blocks are either mapped onto physical pages or not.
 */
export class Segment {
  constructor(
    readonly addr: number,
    readonly size: number,
    readonly stream: number,
    readonly small: boolean,
    /** The block at the segment's lowest address; kept current through splits and merges. */
    public head: Block,
    /** expandable_segments: the granularity of its mappings (2 MiB small pool, 20 MiB large); 0 otherwise. */
    readonly pageSize = 0,
    /** The pool it belongs to: 0 the default pools, else a private pool (a CUDA graph's, a MemPool). */
    readonly pool = 0,
  ) {}

  get expandable(): boolean {
    return this.pageSize > 0;
  }
}

/** A block: a range of one segment, allocated or cached free (PyTorch's Block). */
export class Block {
  // The free-block set's key first in the object (a comparison reads these alone; likely one cache line
  // then): random-s3's replay 81-83 ms against 89 with them after the other fields, n150's 47-48 against 49.
  addr = 0;
  size = 0;
  /** Mutable only so that a search key can be reused. */
  stream = 0;
  small = false;
  /** The request that last allocated this block (the caller's id), -1 if none. */
  tag = -1;
  requestedSize = 0;
  allocated = false;
  /** Freed by the program while another stream still uses it (record_stream): still allocated to the
   * allocator, reported as active_pending_free, until the free completes. */
  pending = false;
  /** Backed by physical pages: always, except the unmapped stretches of an expandable segment. */
  mapped = true;
  prev: Block | null = null;
  next: Block | null = null;
  /** Large-pool get_free_block call count when the block entered the free set (gc age). */
  gcCountBase = 0;
  segment: Segment;

  constructor(addr: number, size: number, stream: number, small: boolean, segment: Segment | null) {
    this.addr = addr;
    this.size = size;
    this.stream = stream;
    this.small = small;
    this.segment = segment ?? (null as unknown as Segment);
  }

  /** Makes a block merged away into a fresh one (the allocator recycles them). */
  reset(addr: number, size: number, stream: number, small: boolean, segment: Segment): void {
    this.addr = addr;
    this.size = size;
    this.stream = stream;
    this.small = small;
    this.segment = segment;
    this.tag = -1;
    this.requestedSize = 0;
    this.allocated = false;
    this.pending = false;
    this.mapped = true;
    this.prev = null;
    this.next = null;
    this.gcCountBase = 0;
  }

  isSplit(): boolean {
    return this.prev !== null || this.next !== null;
  }
}

/** How a replay checkpoint copies segments (lib/fork): their fields are read-only but to a copy. */
export const SEGMENT_COPIER: Copier<Segment> = {
  blank: () => new Segment(0, 0, 0, false, null as unknown as Block),
  fill(from, to, copy) {
    const t = to as { -readonly [K in keyof Segment]: Segment[K] };
    t.addr = from.addr;
    t.size = from.size;
    t.stream = from.stream;
    t.small = from.small;
    t.head = copy(from.head);
    t.pageSize = from.pageSize;
    t.pool = from.pool;
  },
};

/** How a replay checkpoint copies blocks, the allocator's most numerous objects (lib/fork). */
export const BLOCK_COPIER: Copier<Block> = {
  blank: () => new Block(0, 0, 0, false, null),
  fill(from, to, copy) {
    to.addr = from.addr;
    to.size = from.size;
    to.stream = from.stream;
    to.small = from.small;
    to.segment = copy(from.segment);
    to.tag = from.tag;
    to.requestedSize = from.requestedSize;
    to.allocated = from.allocated;
    to.pending = from.pending;
    to.mapped = from.mapped;
    to.prev = copy(from.prev);
    to.next = copy(from.next);
    to.gcCountBase = from.gcCountBase;
  },
};

/**
 * A segment as torch.cuda.memory_snapshot() reports it: a cudaMalloc'd segment, or one contiguous
 * mapped range of an expandable segment. Its blocks run from `head` while `mapped` holds.
 */
export interface SegmentView {
  addr: number;
  size: number;
  stream: number;
  small: boolean;
  expandable: boolean;
  head: Block;
  /** The model's segment the blocks belong to (for an expandable one, its whole reserved range). */
  segment: Segment;
}
