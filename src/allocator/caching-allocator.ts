// A model of one device's DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp, torch 2.11):
// the same decisions in the same order, so that it records the same trace events as PyTorch. Its
// sections follow PyTorch's call path: malloc, free, expandable segments, release and gc, OOM; then
// what torch.cuda reports, and last what only splitscope needs (state adopted before a trace began).
// Streams are plain numbers; CUDA events and cross-stream uses are not modelled (a free completes at once).
import { Block, BLOCK_COPIER, Segment, SEGMENT_COPIER, type SegmentView } from './block';
import type { Capacity } from './capacity';
import { H200_TOTAL_MEMORY } from './capacity';
import { DEFAULT_CONFIG, maxSplitSizeStat, type AllocatorConfig } from './config';
import { ConfigError } from './config-error';
import { MIN_BLOCK_SIZE, SMALL_SIZE } from './constants';
import { pageSizeFor, pagesCovering, pagesInside, reservedRangeSize, UnmappedBlocks } from './expandable-segment';
import { FreeBlockSet, type OrderedFreeBlocks } from './free-block-set';
import { oomMessage } from './oom-message';
import { explainOom } from './oom-reason';
import { isSmallSize, roundSize, segmentSizeFor } from './sizes';
import { AllocatorStats, Stat } from './stats';
import type { SegmentPlacement } from './placement/segment-placement';
import { Action } from './trace-action';
import type { TraceSink } from './trace-sink';
import { constructedCopier, type Copier } from '../lib/fork';

export interface AllocatorOptions {
  config: AllocatorConfig;
  placement: SegmentPlacement;
  capacity?: Capacity;
  /** The device's total memory, for OOM messages and device_free (default: an H200's). */
  deviceTotal?: number;
  /** Device memory used outside PyTorch's allocator (CUDA context, other processes). */
  otherDeviceBytes?: number;
  device?: number;
  sink?: TraceSink;
  /** Another ordered-set implementation, for benchmarks that compare them. */
  freeBlockSet?: () => OrderedFreeBlocks;
  /** Frees may be deferred (record_stream): active* stats are then counted on their own. */
  deferredFrees?: boolean;
}

export interface OomInfo {
  /** Rounded request size, as the recorded oom event has it. */
  size: number;
  /** The segment size that could not be had (what PyTorch's message says it tried to allocate). */
  segmentSize: number;
  stream: number;
  deviceFree: number;
  message: string;
  /** Why, in words: the cache, the cap or the device, and the setting in the way (oom-reason.ts). */
  why: string[];
  /** The memory cap under which this request's last cudaMalloc would have gone through: reserved after
   * the cache's release, plus the segment (what the cap is checked against) ... */
  capNeeded: number;
  /** ... and whether the cap refused a cudaMalloc before this request. Where none did, the run up to here
   * is the uncapped one under any cap at least this one, so every cap below capNeeded runs out here too. */
  capRefusedBefore: boolean;
}

class BlockPool {
  /** get_free_blocks_call_count: the clock of gc ages. */
  freeBlockCalls = 0;
  /** expandable_segments: the blocks no physical memory backs. */
  readonly unmapped = new UnmappedBlocks();
  constructor(
    readonly small: boolean,
    readonly blocks: OrderedFreeBlocks,
    /** 0: the default pools; else the private pool (PrivatePool) it belongs to. */
    readonly pool = 0,
  ) {}
}

/** A private pool (CUDA graphs, MemPool): its own small and large block pools (PyTorch's PrivatePool). */
interface PrivatePool {
  small: BlockPool;
  large: BlockPool;
  /** Its graph was released (releasePool): release_cached_blocks may free its whole free segments. */
  freeable: boolean;
}

const NO_SINK: TraceSink = { record() {} };

export class CachingAllocator {
  readonly config: AllocatorConfig;
  readonly stats: AllocatorStats;
  /** Live segments by address. */
  readonly segments = new Map<number, Segment>();
  lastOom: OomInfo | null = null;
  /** cudaMallocs the memory cap refused (each try of alloc_block's), for the smallest cap's search. */
  private capRefusals = 0;

  private readonly small: BlockPool;
  private readonly large: BlockPool;
  private readonly placement: SegmentPlacement;
  private readonly capacity: Capacity | undefined;
  private readonly deviceTotal: number;
  private readonly otherDeviceBytes: number;
  private readonly device: number;
  /** One sink for the allocator's life: its record calls stay monomorphic, so V8 inlines them. */
  private readonly sink: TraceSink;
  private readonly maxSplit: number;
  private readonly gcEnabled: boolean;
  private readonly plainRounding: boolean;
  private readonly expandable: boolean;
  /** Live expandable segments (spares the hot paths a look at each block's segment when there are none). */
  private expandableCount = 0;
  /** Mapping pages fails beyond this (cuMemCreate finds no memory): the device, when it is the cap. */
  private readonly physicalLimit: number;
  /** Private pools by index (1, 2, ...; 0 is the default pools). */
  private readonly privatePools: PrivatePool[] = [];
  private readonly makeFreeSet: () => OrderedFreeBlocks;
  /** Blocks freed by the program that other streams still use, in the order they were freed. */
  private readonly pendingBlocks: Block[] = [];
  private readonly countActive: boolean;
  /** Blocks merged away, reused by later splits. */
  private readonly spareBlocks: Block[] = [];
  /** total_allocated_memory: bytes held in segments. */
  private reserved = 0;

  constructor(options: AllocatorOptions) {
    const { config } = options;
    if (config.backend !== 'native') {
      throw new ConfigError(
        'backend:cudaMallocAsync hands allocation to the CUDA driver\'s own pool, which splitscope does not model; ' +
          'use backend:native (the default).',
      );
    }
    this.config = config;
    this.stats = new AllocatorStats(options.deferredFrees ?? false);
    this.countActive = options.deferredFrees ?? false;
    const makeSet = options.freeBlockSet ?? (() => new FreeBlockSet());
    this.makeFreeSet = makeSet;
    this.small = new BlockPool(true, makeSet());
    this.large = new BlockPool(false, makeSet());
    this.placement = options.placement;
    this.capacity = options.capacity;
    this.deviceTotal = options.deviceTotal ?? H200_TOTAL_MEMORY;
    this.otherDeviceBytes = options.otherDeviceBytes ?? 0;
    this.device = options.device ?? 0;
    this.sink = options.sink ?? NO_SINK;
    this.maxSplit = config.maxSplitSize;
    this.gcEnabled = options.capacity?.kind === 'fraction' && config.garbageCollectionThreshold > 0;
    this.plainRounding = config.roundupPower2Divisions.every((d) => d <= 1);
    this.expandable = config.expandableSegments;
    this.physicalLimit = options.capacity?.kind === 'device' ? options.capacity.bytes : Infinity;
  }

  // ---------------------------------------------------------------- malloc
  // A cached block (get_free_block), else the cache-miss path (gc, alloc_block, release and retry,
  // OOM), then the split (alloc_found_block).

  /**
   * Allocates `size` bytes on `stream`; null on OOM (then lastOom says why). `tag` labels the block.
   * `pool`: a private pool's index (get_pool picks it while a CUDA graph captures), 0 the default pools.
   */
  malloc(size: number, stream: number, tag = -1, pool = 0): Block | null {
    // Without roundup_power2_divisions every request rounds to a multiple of 512 (the common case).
    const rounded = this.plainRounding
      ? size < MIN_BLOCK_SIZE
        ? MIN_BLOCK_SIZE
        : Math.ceil(size / MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
      : roundSize(size, this.config);
    const blockPool = pool === 0 ? (isSmallSize(rounded) ? this.small : this.large) : this.blockPool(pool, isSmallSize(rounded));

    const cached = this.getFreeBlock(blockPool, rounded, stream);
    if (cached) return this.allocFoundBlock(blockPool, cached, true, rounded, size, stream, tag);
    const block = this.blockFromNewSegment(blockPool, rounded, stream);
    return block ? this.allocFoundBlock(blockPool, block, false, rounded, size, stream, tag) : null;
  }

  private getFreeBlock(pool: BlockPool, size: number, stream: number): Block | null {
    if (this.gcEnabled) pool.freeBlockCalls++;
    let block = pool.blocks.lowerBound(stream, size);
    if (!block || block.stream !== stream) return null;
    if (this.expandableCount > 0 && block.segment.expandable) {
      const fit = this.expandable ? this.bestExpandableFit(pool, block, stream) : this.firstCudaMalloced(pool, block, stream);
      if (!fit) return null;
      block = fit;
    }
    // A request below max_split never takes an oversize block ...
    if (size < this.maxSplit && block.size >= this.maxSplit) return null;
    // ... and one at or above it takes a block only when little is wasted.
    if (size >= this.maxSplit && block.size >= size + this.config.maxNonSplitRounding) return null;
    return block; // still in the free set: allocFoundBlock takes it out
  }

  /**
   * Best fit counts a block before unmapped space as the size it could grow to, so a block that
   * ends where the mapping ends loses to the next larger one (get_free_block).
   */
  private bestExpandableFit(pool: BlockPool, first: Block, stream: number): Block {
    const growable = (b: Block): number => b.size + (b.next && !b.next.mapped ? b.next.size : 0);
    let block = first;
    for (let next = pool.blocks.next(block); ; next = pool.blocks.next(block)) {
      if (!block.segment.expandable || !next || next.stream !== stream || growable(next) >= growable(block)) break;
      block = next;
    }
    return block;
  }

  /** With expandable_segments off, blocks of expandable segments made earlier are passed over. */
  private firstCudaMalloced(pool: BlockPool, first: Block, stream: number): Block | null {
    let block: Block | undefined = first;
    while (block && block.stream === stream && block.segment.expandable) block = pool.blocks.next(block);
    return block && block.stream === stream ? block : null;
  }

  /** The cache-miss path: gc, cudaMalloc, free oversize blocks and retry, free all and retry, OOM. */
  private blockFromNewSegment(pool: BlockPool, rounded: number, stream: number): Block | null {
    const segmentSize = segmentSizeFor(rounded, this.config.largeSegmentSize);
    const refusedBefore = this.capRefusals;
    if (this.gcEnabled) this.garbageCollect();
    let block =
      this.allocSegment(pool, rounded, segmentSize, stream, false) ??
      (this.releaseAvailableCachedBlocks(pool, rounded, stream)
        ? this.allocSegment(pool, rounded, segmentSize, stream, false)
        : null);
    // While a CUDA graph captures (its private pool is asked), nothing may be freed: no full release.
    if (!block && pool.pool === 0) {
      this.releaseCachedBlocks();
      block = this.allocSegment(pool, rounded, segmentSize, stream, true);
    }
    if (!block) this.recordOom(pool, rounded, segmentSize, stream, refusedBefore > 0);
    return block;
  }

  /**
   * alloc_block: cudaMalloc of a new segment of `size` bytes for a request of `rounded` bytes (with
   * expandable_segments, pages mapped for it instead); null when the memory cap (or the device) is full.
   */
  private allocSegment(pool: BlockPool, rounded: number, size: number, stream: number, isRetry: boolean): Block | null {
    if (isRetry) this.stats.count('num_alloc_retries');
    // Private pools (CUDA graphs, MemPools) map pages too: alloc_block passes over expandable segments
    // for them only in Meta's internal build (in_fbcode).
    const expandable = this.expandable;
    // The memory fraction is checked against the segment size even where pages are mapped instead.
    const capped = this.capacity && (this.capacity.kind === 'fraction' || !expandable);
    if (capped && this.reserved + size > this.capacity!.bytes) {
      this.capRefusals++;
      return null;
    }
    if (expandable) return this.allocExpandable(pool, rounded, stream);
    const addr = this.placement.place(size);
    const block = this.newSegment(addr, size, stream, pool);
    this.sink.record(Action.segment_alloc, addr, size, stream, -1);
    return block;
  }

  /** A new segment held by one free block (not yet in the free set), with its stats. */
  private newSegment(addr: number, size: number, stream: number, pool: BlockPool): Block {
    const small = pool.small;
    const block = new Block(addr, size, stream, small, null);
    block.segment = new Segment(addr, size, stream, small, block, 0, pool.pool);
    this.segments.set(addr, block.segment);
    this.reserved += size;
    this.stats.increase(Stat.segment, small, 1);
    this.stats.increase(Stat.reserved_bytes, small, size);
    if (size >= this.maxSplit) this.stats.increaseOversize(Stat.oversize_segments);
    this.stats.count('num_device_alloc');
    return block;
  }

  private shouldSplit(block: Block, size: number): boolean {
    const remaining = block.size - size;
    // expandable_segments splits at any size: its free pages can be unmapped wherever they are.
    if (block.small || this.expandable) return remaining >= MIN_BLOCK_SIZE;
    return size < this.maxSplit && remaining > SMALL_SIZE;
  }

  /** `inSet`: `found` is still in the pool's free set (a cache hit). */
  private allocFoundBlock(
    pool: BlockPool,
    found: Block,
    inSet: boolean,
    size: number,
    requested: number,
    stream: number,
    tag: number,
    split = this.shouldSplit(found, size),
  ): Block {
    const { stats } = this;
    const small = pool.small;
    // inactive_split leaves expandable segments out: their free pages can always be released.
    const countSplit = this.expandableCount === 0 || !found.segment.expandable;
    const alreadySplit = countSplit && found.isSplit();
    let block = found;
    if (split) {
      const remaining = found;
      block = this.newBlock(remaining.addr, size, stream, small, remaining.segment);
      this.linkBefore(block, remaining);
      if (inSet) {
        // The remainder stays in the set, moved to its new place.
        remaining.gcCountBase = pool.freeBlockCalls;
        pool.blocks.shrinkFront(remaining, size);
      } else {
        remaining.addr += size;
        remaining.size -= size;
        this.insertFree(pool, remaining);
      }
      if (alreadySplit) {
        stats.decrease(Stat.inactive_split_bytes, small, block.size);
      } else if (countSplit) {
        stats.increase(Stat.inactive_split_bytes, small, remaining.size);
        stats.increase(Stat.inactive_split, small, 1);
      }
    } else {
      if (inSet) pool.blocks.delete(found);
      if (alreadySplit) {
        stats.decrease(Stat.inactive_split_bytes, small, block.size);
        stats.decrease(Stat.inactive_split, small, 1);
      }
    }
    block.allocated = true;
    block.requestedSize = requested;
    block.tag = tag;
    this.sink.record(Action.alloc, block.addr, requested, block.stream, tag);
    stats.increase(Stat.allocation, small, 1);
    if (this.countActive) {
      stats.increase(Stat.active, small, 1);
      stats.increase(Stat.active_bytes, small, block.size);
    }
    stats.increase(Stat.allocated_bytes, small, block.size);
    stats.increase(Stat.requested_bytes, small, requested);
    if (block.size >= this.maxSplit) stats.increaseOversize(Stat.oversize_allocations);
    return block;
  }

  // ---------------------------------------------------------------- free
  // The block goes back to its pool and merges with free neighbours (free_block, try_merge_blocks).

  /** Returns an allocated block to the cache. */
  /**
   * Returns an allocated block to the cache. `deferred`: another stream still uses it (record_stream):
   * it stays pending, neither allocated nor reusable, until completeFree (PyTorch: insert_events, then
   * process_events at a later malloc).
   */
  free(block: Block, deferred = false): void {
    const small = block.small;
    this.stats.decrease(Stat.allocation, small, 1);
    this.stats.decrease(Stat.allocated_bytes, small, block.size);
    this.sink.record(Action.free_requested, block.addr, block.requestedSize, block.stream, block.tag);
    if (block.size >= this.maxSplit) this.stats.decreaseOversize(Stat.oversize_allocations);
    if (deferred) {
      block.pending = true;
      this.pendingBlocks.push(block);
      return;
    }
    block.allocated = false;
    this.freeBlock(block);
  }

  /** A deferred free completes (free_completed): the block joins the cache. False if it was not pending. */
  completeFree(block: Block): boolean {
    if (!block.pending) return false;
    this.pendingBlocks.splice(this.pendingBlocks.indexOf(block), 1);
    this.finishPending(block);
    return true;
  }

  /** synchronize_and_free_events: every pending free completes, in the order they were freed. */
  private completeAllFrees(): void {
    for (const block of this.pendingBlocks.splice(0)) this.finishPending(block);
  }

  private finishPending(block: Block): void {
    block.pending = false;
    block.allocated = false;
    this.freeBlock(block);
  }

  private freeBlock(block: Block): void {
    const small = block.small;
    this.sink.record(Action.free_completed, block.addr, block.requestedSize, block.stream, block.tag);
    const requested = block.requestedSize;
    const originalSize = block.size;
    const pool = this.poolOfBlock(block);
    let netBlocks = 0;
    let netBytes = 0;
    // Both neighbours are taken before merging, as PyTorch does.
    const { prev, next } = block;
    const mergedPrev = this.tryMerge(block, prev);
    const mergedNext = this.tryMerge(block, next);
    if (mergedPrev > 0) {
      netBlocks -= 1;
      netBytes -= mergedPrev;
    }
    if (mergedNext > 0) {
      netBlocks -= 1;
      netBytes -= mergedNext;
    }
    // The merged block takes a merged neighbour's place in the set (cheaper than out and in).
    block.gcCountBase = pool.freeBlockCalls;
    if (mergedPrev > 0 && mergedNext > 0) pool.blocks.delete(next!);
    if (mergedPrev > 0) pool.blocks.replace(prev!, block);
    else if (mergedNext > 0) pool.blocks.replace(next!, block);
    else pool.blocks.insert(block);
    if (block.isSplit()) {
      netBlocks += 1;
      netBytes += block.size;
    }
    const { stats } = this;
    // inactive_split leaves expandable segments out: their free pages can always be released.
    if (this.expandableCount > 0 && block.segment.expandable) netBlocks = netBytes = 0;
    if (netBlocks > 0) stats.increase(Stat.inactive_split, small, netBlocks);
    else if (netBlocks < 0) stats.decrease(Stat.inactive_split, small, -netBlocks);
    if (netBytes > 0) stats.increase(Stat.inactive_split_bytes, small, netBytes);
    else if (netBytes < 0) stats.decrease(Stat.inactive_split_bytes, small, -netBytes);
    stats.decrease(Stat.requested_bytes, small, requested);
    if (this.countActive) {
      stats.decrease(Stat.active, small, 1);
      stats.decrease(Stat.active_bytes, small, originalSize);
    }
  }

  /** Merges free neighbour `src` into `dst`; returns the bytes taken over, 0 if not mergeable. `src` stays in the free set. */
  private tryMerge(dst: Block, src: Block | null): number {
    if (!src || src.allocated || src.mapped !== dst.mapped) return 0;
    if (dst.prev === src) {
      dst.addr = src.addr;
      dst.prev = src.prev;
      if (dst.prev) dst.prev.next = dst;
      else dst.segment.head = dst;
    } else {
      dst.next = src.next;
      if (dst.next) dst.next.prev = dst;
    }
    dst.size += src.size;
    // src leaves every structure (freeBlock takes it out of the free set): keep it for the next
    // split (saves a GC-heavy allocation).
    this.spareBlocks.push(src);
    return src.size;
  }

  // ---------------------------------------------------------------- expandable_segments
  // One virtual range per stream and pool, pages mapped and unmapped as needed.

  /** try_allocate_expandable_block: maps pages until a free block of `size` bytes exists, and takes it out of the free set. */
  private allocExpandable(pool: BlockPool, size: number, stream: number): Block | null {
    let candidate = this.findExpandableBlock(pool, size, stream);
    if (!candidate.mapped && !this.mapBlock(pool, candidate, Math.min(candidate.size, size))) return null;
    // Free mapped space runs into unmapped space: map more of it, which merges with what is there.
    while (candidate.size < size) {
      const next = candidate.next!;
      if (!this.mapBlock(pool, next, Math.min(size - candidate.size, next.size))) return null;
      candidate = next;
    }
    pool.blocks.delete(candidate);
    return candidate;
  }

  /**
   * find_expandable_block: the lowest unmapped block of the stream (or the free block just before it)
   * from which `size` bytes of free address space run; else a new segment's unmapped range.
   */
  private findExpandableBlock(pool: BlockPool, size: number, stream: number): Block {
    for (const unmapped of pool.unmapped.onStream(stream)) {
      const start = unmapped.prev && !unmapped.prev.allocated ? unmapped.prev : unmapped;
      let bytes = 0;
      for (let b: Block | null = start; b && !b.allocated && bytes < size; b = b.next) bytes += b.size;
      if (bytes >= size) return start;
    }
    return this.reserveSegment(pool, stream);
  }

  /** A new expandable segment: its whole virtual range, one unmapped block. */
  private reserveSegment(pool: BlockPool, stream: number, at?: number): Block {
    const pageSize = pageSizeFor(pool.small, this.config.largeSegmentSize);
    const size = reservedRangeSize(this.deviceTotal, pageSize);
    const addr = this.placement.reserve(size, at);
    const block = new Block(addr, size, stream, pool.small, null);
    block.mapped = false;
    block.segment = new Segment(addr, size, stream, pool.small, block, pageSize, pool.pool);
    this.segments.set(addr, block.segment);
    this.expandableCount++;
    pool.unmapped.insert(block);
    return block;
  }

  /** map_block: maps the pages under the first `size` bytes of unmapped `block`, which joins the free set. */
  private mapBlock(pool: BlockPool, block: Block, size: number): boolean {
    const segment = block.segment;
    const [lo, hi] = pagesCovering(segment, block.addr, size);
    const bytes = hi - lo;
    if (this.reserved + bytes > this.physicalLimit) return false;
    pool.unmapped.delete(block);
    block.mapped = true;
    if (bytes < block.size) {
      const rest = this.newBlock(block.addr + bytes, block.size - bytes, block.stream, block.small, segment);
      rest.mapped = false;
      this.linkAfter(rest, block);
      pool.unmapped.insert(rest);
      block.size = bytes;
    }
    const { prev, next } = block;
    if (this.tryMerge(block, prev)) pool.blocks.delete(prev!);
    if (this.tryMerge(block, next)) pool.blocks.delete(next!);
    this.insertFree(pool, block);
    this.reserved += bytes;
    this.stats.increase(Stat.reserved_bytes, pool.small, bytes);
    this.stats.count('num_device_alloc');
    this.sink.record(Action.segment_map, lo, bytes, block.stream, -1);
    this.placement.mapPages?.(segment.addr, lo, bytes);
    return true;
  }

  /** unmap_block: unmaps the whole pages inside free `block`; the rest of it stays mapped and free. */
  private unmapBlock(pool: BlockPool, block: Block): void {
    const segment = block.segment;
    const [lo, hi] = pagesInside(segment, block.addr, block.size);
    if (hi <= lo) return;
    pool.blocks.delete(block);
    if (lo > block.addr) {
      const below = this.newBlock(block.addr, lo - block.addr, block.stream, block.small, segment);
      this.linkBefore(below, block);
      this.insertFree(pool, below);
    }
    if (hi < block.addr + block.size) {
      const above = this.newBlock(hi, block.addr + block.size - hi, block.stream, block.small, segment);
      this.linkAfter(above, block);
      this.insertFree(pool, above);
    }
    block.addr = lo;
    block.size = hi - lo;
    block.mapped = false;
    const { prev, next } = block;
    if (this.tryMerge(block, prev)) pool.unmapped.delete(prev!);
    if (this.tryMerge(block, next)) pool.unmapped.delete(next!);
    pool.unmapped.insert(block);
    this.reserved -= hi - lo;
    this.stats.decrease(Stat.reserved_bytes, pool.small, hi - lo);
    this.stats.count('num_device_free');
    this.sink.record(Action.segment_unmap, lo, hi - lo, block.stream, -1);
    this.placement.unmapPages?.(segment.addr, lo, hi - lo);
  }

  // ---------------------------------------------------------------- release and gc
  // empty_cache, release_available_cached_blocks, release_cached_blocks, garbage_collect_cached_blocks.

  /**
   * torch.cuda.empty_cache(): frees every cached segment that holds no allocation, of the default pools
   * and of released private pools. `pool`: emptyCache(id), as ~MemPool calls it: only that pool's, and
   * only once it is released (releasePool).
   */
  emptyCache(pool = 0): void {
    if (pool === 0) return this.releaseCachedBlocks();
    const p = this.privatePools[pool];
    if (!p?.freeable) return;
    this.stats.count('num_sync_all_streams');
    for (const block of this.pendingBlocks.filter((b) => b.segment.pool === pool)) this.completeFree(block);
    this.releaseBlocks(p.small);
    this.releaseBlocks(p.large);
  }

  /** releasePool: a private pool's graph (or MemPool) went away: its cached blocks may now be freed. */
  releasePool(pool: number): void {
    if (pool === 0) return;
    this.blockPool(pool, true);
    this.privatePools[pool]!.freeable = true;
  }

  /** Frees oversize cached blocks, only as many as the request needs (max_split_size set only). */
  private releaseAvailableCachedBlocks(pool: BlockPool, size: number, stream: number): boolean {
    if (!Number.isFinite(this.maxSplit)) return false;
    const keySize = Math.max(size, this.maxSplit);
    const found = pool.blocks.lowerBound(stream, keySize);
    // It frees only cudaMalloc'd segments: expandable segments' blocks are passed over.
    if (found && found.stream === stream && !found.segment.expandable) {
      this.releaseSegment(pool, found);
      return true;
    }
    // No single block is large enough: free oversize blocks of this stream, largest first.
    let released = 0;
    let candidate = pool.blocks.lastBefore(stream, keySize);
    while (candidate && released < keySize && candidate.size >= this.maxSplit && candidate.stream === stream) {
      const current = candidate;
      candidate = pool.blocks.previous(current);
      if (current.segment.expandable) continue;
      released += current.size;
      this.releaseSegment(pool, current);
    }
    return released >= keySize;
  }

  /**
   * release_cached_blocks: every whole free segment, large pool first, in (stream, size, address)
   * order; then every whole free page of expandable segments, dropping segments left with none.
   */
  private releaseCachedBlocks(): void {
    this.stats.count('num_sync_all_streams');
    if (this.pendingBlocks.length > 0) this.completeAllFrees();
    // The default pools (large, then small), then those of released graphs (graph_pools_freeable: small, then large).
    this.releaseBlocks(this.large);
    this.releaseBlocks(this.small);
    for (const p of this.privatePools) {
      if (!p?.freeable) continue;
      this.releaseBlocks(p.small);
      this.releaseBlocks(p.large);
    }
  }

  /** release_blocks: a pool's whole free segments, and the whole free pages of its expandable ones. */
  private releaseBlocks(pool: BlockPool): void {
    const toUnmap: Block[] = [];
    for (const block of pool.blocks.toArray()) {
      if (block.segment.expandable) toUnmap.push(block);
      else if (!block.isSplit()) this.releaseSegment(pool, block);
    }
    for (const block of toUnmap) {
      this.unmapBlock(pool, block);
      if (!block.mapped && !block.isSplit()) {
        pool.unmapped.delete(block);
        this.segments.delete(block.segment.addr);
        this.expandableCount--;
        this.placement.unreserve(block.segment.addr);
      }
    }
  }

  /** cudaFree of a whole free segment. */
  private releaseSegment(pool: BlockPool, block: Block): void {
    this.stats.count('num_device_free');
    this.sink.record(Action.segment_free, block.addr, block.size, block.stream, -1);
    this.reserved -= block.size;
    this.stats.decrease(Stat.segment, block.small, 1);
    this.stats.decrease(Stat.reserved_bytes, block.small, block.size);
    if (block.size >= this.maxSplit) this.stats.decreaseOversize(Stat.oversize_segments);
    pool.blocks.delete(block);
    this.segments.delete(block.addr);
    this.placement.release(block.addr);
  }

  /** garbage_collect_cached_blocks: frees old unsplit large blocks until reserved is under the threshold. */
  private garbageCollect(): void {
    const cap = this.capacity!.bytes;
    const threshold = Math.floor(this.config.garbageCollectionThreshold * cap);
    if (this.reserved <= threshold) return;
    const target = this.reserved - threshold;
    const pool = this.large;
    const age = (b: Block): number => pool.freeBlockCalls - b.gcCountBase;
    let totalAge = 0;
    let freeable = 0;
    for (const b of pool.blocks.toArray()) {
      if (!b.isSplit()) {
        totalAge += age(b);
        freeable++;
      }
    }
    if (freeable === 0) return;
    let reclaimed = 0;
    let freedOne = true;
    while (reclaimed < target && freedOne && freeable > 0) {
      const ageThreshold = totalAge / freeable;
      freedOne = false;
      for (const b of pool.blocks.toArray()) {
        if (!b.isSplit() && !b.segment.expandable && age(b) >= ageThreshold) {
          freedOne = true;
          reclaimed += b.size;
          totalAge -= age(b);
          freeable--;
          this.releaseSegment(pool, b);
        }
      }
    }
  }

  // ---------------------------------------------------------------- OOM
  // What the oom event records and the message PyTorch raises.

  private recordOom(pool: BlockPool, size: number, segmentSize: number, stream: number, capRefusedBefore: boolean): void {
    const deviceFree = Math.max(0, this.deviceTotal - this.otherDeviceBytes - this.reserved);
    this.sink.record(Action.oom, deviceFree, size, stream, -1);
    this.stats.count('num_ooms');
    const allocated = this.stats.current(Stat.allocated_bytes);
    const allowed = this.capacity?.kind === 'fraction' ? this.capacity.bytes : undefined;
    // What the cache had for it (after the release): the pool's largest block on the stream, and a
    // block large enough that the max_split rules refused.
    const largest = pool.blocks.lastBefore(stream, Infinity);
    const fits = pool.blocks.lowerBound(stream, size);
    const why = explainOom({
      size,
      segmentSize,
      stream,
      largestCached: largest && largest.stream === stream ? largest.size : 0,
      refusedBlock: fits && fits.stream === stream ? fits.size : 0,
      maxSplitSize: this.maxSplit,
      maxNonSplitRounding: this.config.maxNonSplitRounding,
      reserved: this.reserved,
      allocated,
      ...(allowed !== undefined ? { allowed } : {}),
      deviceFree: this.capacity?.kind === 'device' ? Math.max(0, this.capacity.bytes - this.reserved) : deviceFree,
      expandable: this.expandable,
    });
    this.lastOom = {
      size,
      segmentSize,
      stream,
      deviceFree,
      why,
      capNeeded: this.reserved + segmentSize,
      capRefusedBefore,
      message: oomMessage({
        segmentSize,
        device: this.device,
        deviceTotal: this.deviceTotal,
        deviceFree,
        processBytes: this.reserved + this.otherDeviceBytes,
        ...(allowed !== undefined ? { allowed } : {}),
        allocated,
        reserved: this.reserved,
      }),
    };
  }

  // ---------------------------------------------------------------- the state as torch.cuda reports it
  // memory_reserved, memory_stats, cacheInfo, memory_snapshot.

  /** Bytes held in segments (memory_reserved). */
  get reservedBytes(): number {
    return this.reserved;
  }

  /** torch.cuda.reset_peak_memory_stats(). */
  resetPeakStats(): void {
    this.stats.resetPeaks();
  }

  /** torch.cuda.memory_stats() for this device. */
  memoryStats(): Record<string, number> {
    const out = this.stats.toRecord();
    out['max_split_size'] = maxSplitSizeStat(this.config);
    return out;
  }

  /** Size of the largest cached free block (cacheInfo), 0 when none. */
  largestFreeBlock(): number {
    return Math.max(this.small.blocks.largest(), this.large.blocks.largest());
  }

  /** The cached free blocks of both pools, in each pool's (stream, size, address) order. */
  freeBlocks(): Block[] {
    return [...this.small.blocks.toArray(), ...this.large.blocks.toArray()];
  }

  /** The segments as memory_snapshot() reports them (each mapped range of an expandable segment on
   * its own), in address order. */
  segmentsByAddress(): SegmentView[] {
    const views: SegmentView[] = [];
    for (const segment of this.segments.values()) {
      const { stream, small, expandable } = segment;
      for (let b: Block | null = segment.head; b; ) {
        if (!b.mapped) {
          b = b.next;
          continue;
        }
        const head = b;
        let size = 0;
        for (; b && b.mapped; b = b.next) size += b.size;
        views.push({ addr: head.addr, size, stream, small, expandable, head, segment });
      }
    }
    return views.sort((a, b) => a.addr - b.addr);
  }

  // ---------------------------------------------------------------- block lists
  // The segment's doubly linked blocks and the pools' free sets.

  /** The block pool of a pool index (0: the default pools; else a private pool, made when first asked). */
  private blockPool(pool: number, small: boolean): BlockPool {
    if (pool === 0) return small ? this.small : this.large;
    let p = this.privatePools[pool];
    if (!p) {
      const makeSet = this.makeFreeSet;
      p = { small: new BlockPool(true, makeSet(), pool), large: new BlockPool(false, makeSet(), pool), freeable: false };
      this.privatePools[pool] = p;
    }
    return small ? p.small : p.large;
  }

  /** The block pool a block's segment belongs to. */
  private poolOfBlock(block: Block): BlockPool {
    const pool = block.segment.pool;
    if (pool === 0) return block.small ? this.small : this.large;
    return this.blockPool(pool, block.small);
  }

  /** A fresh block (one merged away earlier, if any: saves a GC-heavy allocation). */
  private newBlock(addr: number, size: number, stream: number, small: boolean, segment: Segment): Block {
    const block = this.spareBlocks.pop() ?? new Block(0, 0, 0, small, null);
    block.reset(addr, size, stream, small, segment);
    return block;
  }

  /** Links `block` into its segment's list just before `after`. */
  private linkBefore(block: Block, after: Block): void {
    block.prev = after.prev;
    if (block.prev) block.prev.next = block;
    else block.segment.head = block;
    block.next = after;
    after.prev = block;
  }

  /** Links `block` into its segment's list just after `before`. */
  private linkAfter(block: Block, before: Block): void {
    block.next = before.next;
    if (block.next) block.next.prev = block;
    block.prev = before;
    before.next = block;
  }

  private insertFree(pool: BlockPool, block: Block): void {
    block.gcCountBase = pool.freeBlockCalls;
    pool.blocks.insert(block);
  }

  private countNewInactiveSplit(block: Block): void {
    this.stats.increase(Stat.inactive_split_bytes, block.small, block.size);
    this.stats.increase(Stat.inactive_split, block.small, 1);
  }

  // ---------------------------------------------------------------- splitscope only
  // State from before a trace began, adopted without recording events.

  /** Puts a segment that existed before the model started (a trace that begins mid-run). */
  adoptSegment(addr: number, size: number, stream: number, small: boolean, pool = 0): Segment {
    const clash = this.segmentOverlapping(addr, size);
    if (clash) throw new Error(`it overlaps the segment at ${clash.addr} (${clash.size} bytes)`);
    // It was cudaMalloc'd by the same run, before the trace began: counted as a device alloc.
    const blockPool = this.blockPool(pool, small);
    const block = this.newSegment(addr, size, stream, blockPool);
    blockPool.blocks.insert(block);
    return block.segment;
  }

  /** expandable_segments: a segment reserved at `base` before the model started, nothing mapped yet. */
  adoptExpandableSegment(base: number, stream: number, small: boolean): Segment {
    return this.reserveSegment(this.blockPool(0, small), stream, base).segment;
  }

  /** Pages [addr, addr + size) of an adopted expandable segment, mapped before the model started: free. */
  adoptMapping(addr: number, size: number): void {
    const segment = this.segmentContaining(addr);
    const block = segment ? blockAt(segment, addr) : null;
    if (!segment?.expandable || !block || block.mapped || addr + size > block.addr + block.size) {
      throw new Error(`address range ${addr}+${size} is not inside an unmapped part of an expandable segment`);
    }
    const pool = this.blockPool(segment.pool, segment.small);
    if (block.addr < addr) {
      // The unmapped part below stays unmapped.
      pool.unmapped.delete(block);
      const below = this.newBlock(block.addr, addr - block.addr, block.stream, block.small, segment);
      below.mapped = false;
      this.linkBefore(below, block);
      block.addr = addr;
      block.size -= below.size;
      pool.unmapped.insert(below);
      pool.unmapped.insert(block);
    }
    this.mapBlock(pool, block, size);
  }

  /**
   * Marks [addr, addr + size) of an adopted segment allocated, as if a request of `requested`
   * bytes had taken it before the trace began. The range must lie inside one free block.
   * `pending`: the program freed it already, and another stream still uses it (record_stream).
   */
  adoptAllocation(addr: number, size: number, requested: number, tag: number, pending = false): Block {
    const segment = this.segmentContaining(addr);
    if (!segment) throw new Error('no segment holds it (neither the final snapshot nor an event of the trace has one there)');
    const block = blockAt(segment, addr);
    if (!block || block.allocated || !block.mapped || addr + size > block.addr + block.size) {
      throw new Error(`its ${size} bytes overlap another live block, or run past the free space of the segment at ${segment.addr}`);
    }
    const pool = this.blockPool(segment.pool, segment.small);
    pool.blocks.delete(block);
    // Carve off a free block before the range, then let allocFoundBlock split off the rest. The free
    // block counts as an inactive split from now on (allocFoundBlock takes it as one).
    const counted = !segment.expandable && block.isSplit();
    if (block.addr < addr) {
      const before = this.newBlock(block.addr, addr - block.addr, block.stream, block.small, segment);
      this.linkBefore(before, block);
      block.addr = addr;
      block.size -= before.size;
      pool.blocks.insert(before);
      if (counted) this.stats.increase(Stat.inactive_split, block.small, 1);
      else if (!segment.expandable) {
        this.countNewInactiveSplit(before);
        this.countNewInactiveSplit(block);
      }
    }
    const split = block.size > size;
    const adopted = this.allocFoundBlock(pool, block, false, size, requested, block.stream, tag, split);
    if (pending) {
      // Freed by the program: no longer allocated, still active.
      adopted.pending = true;
      this.pendingBlocks.push(adopted);
      this.stats.decrease(Stat.allocation, adopted.small, 1);
      this.stats.decrease(Stat.allocated_bytes, adopted.small, adopted.size);
      if (adopted.size >= this.maxSplit) this.stats.decreaseOversize(Stat.oversize_allocations);
    }
    return adopted;
  }

  private segmentContaining(addr: number): Segment | undefined {
    return this.segmentOverlapping(addr, 1);
  }

  /** A segment with any byte in [addr, addr + size). */
  private segmentOverlapping(addr: number, size: number): Segment | undefined {
    for (const segment of this.segments.values()) {
      if (segment.addr < addr + size && addr < segment.addr + segment.size) return segment;
    }
    return undefined;
  }
}

/** The block of `segment` that holds `addr`, if any (adoption only: it walks the segment). */
function blockAt(segment: Segment, addr: number): Block | null {
  let block: Block | null = segment.head;
  while (block && !(block.addr <= addr && addr < block.addr + block.size)) block = block.next;
  return block;
}

/**
 * How a replay checkpoint copies an allocator (lib/fork), by class prototype: its copies then have the
 * hidden classes of the objects the constructors make, so the replay's hot code, which runs on both,
 * is not deoptimized by a restored checkpoint (on train_gpt2-n12, the first 30 seeks after the
 * checkpoints were made took 127 ms together with Object.create copies, 74 ms with these: medians of 8).
 */
export const ALLOCATOR_COPIERS: ReadonlyMap<object, Copier> = new Map<object, Copier>([
  [Block.prototype, BLOCK_COPIER as unknown as Copier],
  [Segment.prototype, SEGMENT_COPIER as unknown as Copier],
  [CachingAllocator.prototype, constructedCopier(() => new CachingAllocator({ config: DEFAULT_CONFIG, placement: null as unknown as SegmentPlacement }))],
  [BlockPool.prototype, constructedCopier(() => new BlockPool(false, null as unknown as OrderedFreeBlocks))],
  [FreeBlockSet.prototype, constructedCopier(() => new FreeBlockSet())],
  [UnmappedBlocks.prototype, constructedCopier(() => new UnmappedBlocks())],
  [AllocatorStats.prototype, constructedCopier(() => new AllocatorStats())],
]);
