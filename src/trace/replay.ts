// Replay: a request stream through the allocator model under one config and one device model.
import { CachingAllocator, type AllocatorOptions } from '../allocator/caching-allocator';
import type { Block } from '../allocator/block';
import type { Capacity } from '../allocator/capacity';
import type { AllocatorConfig } from '../allocator/config';
import type { DevicePlacement } from '../allocator/driver-placement';
import { Stat } from '../allocator/stats';
import { EventLog } from './event-log';
import { adoptInitialState, driverPlacementFor } from './initial-state';
import { RecordedPlacement } from './recorded-placement';
import { RequestKind, type RequestStream } from './request-stream';

export type AddressModel = 'recorded' | 'simulated';

export interface ReplayOptions {
  config: AllocatorConfig;
  capacity?: Capacity;
  /** 'recorded': segments land where the recording put them; 'simulated': the driver placement model. */
  addresses?: AddressModel;
  /** Top of the driver's first region (default: inferred from the recording, else a typical one). */
  regionTop?: number;
  deviceTotal?: number;
  device?: number;
  /** Request indices after which torch.cuda.empty_cache() runs ... */
  emptyCacheAfter?: readonly number[];
  /** ... and torch.cuda.reset_peak_memory_stats() (after empty_cache where both are given). */
  resetPeakAfter?: readonly number[];
  /** Another ordered-set implementation for the allocator's free blocks (benchmarks). */
  freeBlockSet?: AllocatorOptions['freeBlockSet'];
  /**
   * Only the stats, OOMs and peak are wanted (the CLI without --out, sweeps): the event log keeps
   * its count alone and the series stay empty, which saves writing ~40 bytes per request.
   */
  statsOnly?: boolean;
  /** Stop after this request index (a cursor): the allocator is left as it was then. */
  until?: number;
}

export interface ReplayOom {
  /** Index of the request that failed. */
  request: number;
  /** Rounded size, as PyTorch's oom trace event has it. */
  size: number;
  message: string;
  /** Why it failed, in words. */
  why: string[];
}

/** A recorded-address replay that had to place a segment itself. */
export interface ReplayDivergence {
  request: number;
  size: number;
  addr: number;
}

/** Per-request values after each request, for timelines. */
export interface ReplaySeries {
  allocated: Float64Array;
  reserved: Float64Array;
  /** The same array as `allocated`: without CUDA events a freed block stops being active at once. */
  active: Float64Array;
  /** Requests at which the allocator freed cached blocks and retried cudaMalloc. */
  retries: number[];
}

/** The moment reserved memory peaked (after the request that raised it). */
export interface PeakMoment {
  request: number;
  reserved: number;
  allocated: number;
  largestFreeBlock: number;
}

export interface ReplayResult {
  allocator: CachingAllocator;
  atPeak: PeakMoment;
  /** With statsOnly, its length alone. */
  events: EventLog;
  stats: Record<string, number>;
  ooms: ReplayOom[];
  divergences: ReplayDivergence[];
  /** Empty with statsOnly. */
  series: ReplaySeries;
}

export function replay(stream: RequestStream, options: ReplayOptions): ReplayResult {
  // Each request records an alloc or free_requested + free_completed, plus some segment events.
  const statsOnly = options.statsOnly ?? false;
  const events = new EventLog(Math.ceil(stream.length * 1.6) + 64, { countOnly: statsOnly });
  const divergences: ReplayDivergence[] = [];
  const driver = driverPlacementFor(stream, options.regionTop);
  const placement: DevicePlacement =
    options.addresses === 'recorded'
      ? new RecordedPlacement(
          stream.recordedSegments,
          driver,
          ({ size, addr }) => divergences.push({ request: events.currentRequest, size, addr }),
          stream.recordedMappings,
        )
      : driver;

  const allocator = new CachingAllocator({
    config: options.config,
    placement,
    ...(options.capacity ? { capacity: options.capacity } : {}),
    ...(options.deviceTotal !== undefined ? { deviceTotal: options.deviceTotal } : {}),
    ...(options.device !== undefined ? { device: options.device } : {}),
    ...(options.freeBlockSet ? { freeBlockSet: options.freeBlockSet } : {}),
  });
  const blocks: (Block | null)[] = new Array<Block | null>(stream.idCount).fill(null);

  // State from before the trace began; it records no events.
  for (const [blockId, block] of adoptInitialState(allocator, placement, stream)) blocks[blockId] = block;
  allocator.sink = events;

  const n = Math.min(stream.length, (options.until ?? Infinity) + 1);
  const allocatedSeries = new Float64Array(statsOnly ? 0 : n);
  const reservedSeries = new Float64Array(statsOnly ? 0 : n);
  // Active equals allocated in the model (frees complete at once): one array serves both.
  const series: ReplaySeries = { allocated: allocatedSeries, reserved: reservedSeries, active: allocatedSeries, retries: [] };
  const ooms: ReplayOom[] = [];
  const emptyCacheAfter = new Set(options.emptyCacheAfter ?? []);
  const resetPeakAfter = new Set(options.resetPeakAfter ?? []);
  const { kind, id, size, stream: streams } = stream;
  const stats = allocator.stats;
  const atPeak: PeakMoment = { request: -1, reserved: 0, allocated: 0, largestFreeBlock: 0 };
  for (let i = 0; i < n; i++) {
    events.currentRequest = i;
    const blockId = id[i]!;
    if (kind[i] === RequestKind.alloc) {
      const retriesBefore = statsOnly ? 0 : stats.counter('num_alloc_retries');
      const block = allocator.malloc(size[i]!, streams[i]!, blockId);
      if (!statsOnly && stats.counter('num_alloc_retries') !== retriesBefore) series.retries.push(i);
      if (block) blocks[blockId] = block;
      else ooms.push({ request: i, size: allocator.lastOom!.size, message: allocator.lastOom!.message, why: allocator.lastOom!.why });
    } else {
      const block = blocks[blockId];
      // No block: its alloc failed in this replay, so the program never got a tensor to free.
      if (block) {
        allocator.free(block);
        blocks[blockId] = null;
      }
    }
    if (emptyCacheAfter.size > 0 && emptyCacheAfter.has(i)) allocator.emptyCache();
    if (resetPeakAfter.size > 0 && resetPeakAfter.has(i)) allocator.resetPeakStats();
    const reserved = allocator.reservedBytes;
    const allocated = stats.current(Stat.allocated_bytes);
    if (!statsOnly) {
      allocatedSeries[i] = allocated;
      reservedSeries[i] = reserved;
    }
    if (reserved > atPeak.reserved) {
      atPeak.request = i;
      atPeak.reserved = reserved;
      atPeak.allocated = allocated;
      atPeak.largestFreeBlock = allocator.largestFreeBlock();
    }
  }
  return { allocator, atPeak, events, stats: allocator.memoryStats(), ooms, divergences, series };
}
