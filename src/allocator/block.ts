/** A segment: one cudaMalloc'd range, tiled by blocks. */
export class Segment {
  constructor(
    readonly addr: number,
    readonly size: number,
    readonly stream: number,
    readonly small: boolean,
    /** The block at the segment's lowest address; kept current through splits and merges. */
    public head: Block,
  ) {}
}

/** A block: a range of one segment, allocated or cached free (PyTorch's Block). */
export class Block {
  /** The request that last allocated this block (the caller's id), -1 if none. */
  tag = -1;
  requestedSize = 0;
  allocated = false;
  prev: Block | null = null;
  next: Block | null = null;
  /** Large-pool get_free_block call count when the block entered the free set (gc age). */
  gcCountBase = 0;
  segment: Segment;

  constructor(
    public addr: number,
    public size: number,
    /** Mutable only so that a search key can be reused. */
    public stream: number,
    public small: boolean,
    segment: Segment | null,
  ) {
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
    this.prev = null;
    this.next = null;
    this.gcCountBase = 0;
  }

  isSplit(): boolean {
    return this.prev !== null || this.next !== null;
  }
}
