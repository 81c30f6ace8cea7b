// Replay: a request stream through the allocator model under one config and one device model.
import { CachingAllocator, type AllocatorOptions } from '../../allocator/caching-allocator';
import type { Block } from '../../allocator/block';
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { driverPlacementFor } from '../../allocator/placement/driver-placement';
import type { DevicePlacement } from '../../allocator/placement/segment-placement';
import { Stat } from '../../allocator/stats';
import { EventLog } from './event-log';
import { adoptInitialState } from './initial-state';
import { RecordedPlacement } from '../../allocator/placement/recorded-placement';
import { RequestKind, type RequestStream } from '../stream/request-stream';

export type AddressModel = 'recorded' | 'simulated';

/** Inserted calls: torch.cuda.empty_cache() and reset_peak_memory_stats() after these request indices
 * (empty_cache first where both are given). Calls the user adds to a run, not ones it recorded. */
export interface InsertedCalls {
  emptyCacheAfter?: readonly number[];
  resetPeakAfter?: readonly number[];
}

export interface ReplayOptions extends InsertedCalls {
  config: AllocatorConfig;
  capacity?: Capacity;
  /** 'recorded': segments land where the recording put them; 'simulated': the driver placement model. */
  addresses?: AddressModel;
  /** Top of the driver's first region (default: inferred from the recording, else a typical one). */
  regionTop?: number;
  deviceTotal?: number;
  device?: number;
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
  /** The same array as `allocated` unless frees are deferred (record_stream): a pending block is active. */
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
  /** Parts of the state before the trace began that contradict the rest, left out (in words). */
  problems: string[];
  /** Empty with statsOnly. */
  series: ReplaySeries;
}

/** A replay in progress: everything its loop reads and writes, so that it can stop and go on. */
interface ReplayRun {
  stream: RequestStream;
  allocator: CachingAllocator;
  blocks: (Block | null)[];
  events: EventLog;
  statsOnly: boolean;
  series: ReplaySeries;
  ooms: ReplayOom[];
  divergences: ReplayDivergence[];
  problems: string[];
  atPeak: PeakMoment;
  /** Inserted calls, by the request they follow. */
  emptyCacheAfter: Set<number>;
  resetPeakAfter: Set<number>;
  /** The next request to apply, the next deferred free to complete, and the next of the recording's
   * own empty_cache calls and pool releases. */
  next: number;
  nextCompletion: number;
  nextRecordedCall: number;
  nextRelease: number;
}

/** A replay set up to its first request: the allocator, its device model and the state before the trace. */
function startReplay(stream: RequestStream, options: ReplayOptions, seriesLength: number): ReplayRun {
  // Each request records an alloc or free_requested + free_completed, plus some segment events.
  const statsOnly = options.statsOnly ?? false;
  const events = new EventLog(statsOnly ? 0 : Math.ceil(stream.length * 1.6) + 64, { countOnly: statsOnly });
  const divergences: ReplayDivergence[] = [];
  const preexisting = stream.initialSegments.filter((s) => !s.expandable);
  const driver = driverPlacementFor(stream.recordedSegments, preexisting, options.regionTop);
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
    deferredFrees: hasDeferredFrees(stream),
    ...(options.capacity ? { capacity: options.capacity } : {}),
    ...(options.deviceTotal !== undefined ? { deviceTotal: options.deviceTotal } : {}),
    ...(options.device !== undefined ? { device: options.device } : {}),
    ...(options.freeBlockSet ? { freeBlockSet: options.freeBlockSet } : {}),
  });
  const blocks: (Block | null)[] = new Array<Block | null>(stream.idCount).fill(null);

  // State from before the trace began; it records no events.
  const adopted = adoptInitialState(allocator, placement, stream);
  for (const [blockId, block] of adopted.blocks) blocks[blockId] = block;
  allocator.sink = events;

  const allocatedSeries = new Float64Array(statsOnly ? 0 : seriesLength);
  // Active equals allocated unless frees are deferred: then one array serves both.
  const active = allocator.stats.countActive ? new Float64Array(statsOnly ? 0 : seriesLength) : allocatedSeries;
  const series: ReplaySeries = { allocated: allocatedSeries, reserved: new Float64Array(statsOnly ? 0 : seriesLength), active, retries: [] };
  return {
    stream,
    allocator,
    blocks,
    events,
    statsOnly,
    series,
    ooms: [],
    divergences,
    problems: adopted.problems,
    atPeak: { request: -1, reserved: 0, allocated: 0, largestFreeBlock: 0 },
    emptyCacheAfter: new Set(options.emptyCacheAfter ?? []),
    resetPeakAfter: new Set(options.resetPeakAfter ?? []),
    next: 0,
    nextCompletion: 0,
    nextRecordedCall: 0,
    nextRelease: 0,
  };
}

/** The recording's own calls after request `i`: pools released, then empty_cache. */
function recordedCalls(run: ReplayRun, i: number): void {
  const { after: releasedAfter, pool: released } = run.stream.releasedPools;
  while (releasedAfter[run.nextRelease] === i) run.allocator.releasePool(released[run.nextRelease++]!);
  const { recordedEmptyCache: after, recordedEmptyCachePool: pool } = run.stream;
  while (after[run.nextRecordedCall] === i) run.allocator.emptyCache(pool[run.nextRecordedCall++]!);
}

/** Whether any free of `stream` is deferred (record_stream), so that active* differ from allocation*. */
function hasDeferredFrees(stream: RequestStream): boolean {
  return stream.completions.id.length > 0 || stream.initialBlocks.some((b) => b.pending) || stream.kind.includes(RequestKind.freeDeferred);
}

/** The deferred free of `blockId` completes (its block may already have, in an empty_cache). */
function completeFree(run: ReplayRun, blockId: number): void {
  const block = run.blocks[blockId];
  if (block && block.pending && block.tag === blockId) run.allocator.completeFree(block);
  run.blocks[blockId] = null;
}

/** Applies requests run.next .. end - 1. */
function advance(run: ReplayRun, end: number): void {
  const { allocator, blocks, events, statsOnly, series, ooms, atPeak, emptyCacheAfter, resetPeakAfter } = run;
  const { kind, id, size, stream: streams, pool, length } = run.stream;
  const { before: completionBefore, id: completionId } = run.stream.completions;
  const { allocated: allocatedSeries, reserved: reservedSeries, active: activeSeries } = series;
  const countActive = activeSeries !== allocatedSeries;
  const stats = allocator.stats;
  let c = run.nextCompletion;
  if (run.next === 0) recordedCalls(run, -1);
  for (let i = run.next; i < end; i++) {
    events.currentRequest = i;
    // Deferred frees whose streams are done complete first, as malloc processes CUDA events first.
    while (completionBefore[c] === i) completeFree(run, completionId[c++]!);
    const blockId = id[i]!;
    const k = kind[i];
    if (k === RequestKind.alloc) {
      const retriesBefore = statsOnly ? 0 : stats.counter('num_alloc_retries');
      const block = allocator.malloc(size[i]!, streams[i]!, blockId, pool[i]!);
      if (!statsOnly && stats.counter('num_alloc_retries') !== retriesBefore) series.retries.push(i);
      if (block) blocks[blockId] = block;
      else ooms.push({ request: i, size: allocator.lastOom!.size, message: allocator.lastOom!.message, why: allocator.lastOom!.why });
    } else {
      const block = blocks[blockId];
      // No block: its alloc failed in this replay, so the program never got a tensor to free.
      if (block) {
        // A deferred free keeps its block here until the free completes.
        allocator.free(block, k === RequestKind.freeDeferred);
        if (k === RequestKind.free) blocks[blockId] = null;
      }
    }
    recordedCalls(run, i);
    if (emptyCacheAfter.size > 0 && emptyCacheAfter.has(i)) allocator.emptyCache();
    if (resetPeakAfter.size > 0 && resetPeakAfter.has(i)) allocator.resetPeakStats();
    const reserved = allocator.reservedBytes;
    const allocated = stats.current(Stat.allocated_bytes);
    if (!statsOnly) {
      allocatedSeries[i] = allocated;
      reservedSeries[i] = reserved;
      if (countActive) activeSeries[i] = stats.current(Stat.active_bytes);
    }
    if (reserved > atPeak.reserved) {
      atPeak.request = i;
      atPeak.reserved = reserved;
      atPeak.allocated = allocated;
      atPeak.largestFreeBlock = allocator.largestFreeBlock();
    }
  }
  // Completions recorded after the last request.
  if (end === length) while (completionBefore[c] === length) completeFree(run, completionId[c++]!);
  run.next = Math.max(run.next, end);
  run.nextCompletion = c;
}

export function replay(stream: RequestStream, options: ReplayOptions): ReplayResult {
  const n = Math.min(stream.length, (options.until ?? Infinity) + 1);
  const run = startReplay(stream, options, n);
  advance(run, n);
  const { allocator, atPeak, events, ooms, divergences, problems, series } = run;
  return { allocator, atPeak, events, stats: allocator.memoryStats(), ooms, divergences, problems, series };
}

/**
 * The allocator at any request, cheaply in order: a forward move applies only the requests between,
 * a move back replays from the start. For cursors that play and step (the views), not for figures
 * that need the whole run.
 */
export class ReplayCursor {
  private run: ReplayRun | null = null;

  constructor(
    private readonly stream: RequestStream,
    private readonly options: Omit<ReplayOptions, 'until' | 'statsOnly'>,
  ) {}

  /** The allocator after request `index` (its state belongs to this cursor: read it, do not change it). */
  at(index: number): CachingAllocator {
    const end = Math.min(this.stream.length, index + 1);
    if (!this.run || this.run.next > end) this.run = startReplay(this.stream, { ...this.options, statsOnly: true }, 0);
    advance(this.run, end);
    return this.run.allocator;
  }
}
