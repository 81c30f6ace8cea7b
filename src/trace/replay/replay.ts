// Replay: a request stream through the allocator model under one config and one device model.
import { ALLOCATOR_COPIERS, CachingAllocator, type AllocatorOptions } from '../../allocator/caching-allocator';
import type { Block } from '../../allocator/block';
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { AddressReservations } from '../../allocator/placement/address-reservations';
import { DriverPlacement, driverPlacementFor } from '../../allocator/placement/driver-placement';
import type { DevicePlacement } from '../../allocator/placement/segment-placement';
import { Stat } from '../../allocator/stats';
import { constructedCopier, fork, type Copier, type Copiers } from '../../lib/fork';
import { MaxTree } from '../../lib/max-tree';
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
  /**
   * False: the event log keeps its count alone, the series stay (the page's replays: only an export
   * reads the events, and it replays again; a 1 GB snapshot's events are ~500 MB). Default true.
   */
  keepEvents?: boolean;
  /** Stop after this request index (a cursor): the allocator is left as it was then. */
  until?: number;
  /** Stop at the first OOM the program sees (not one PyTorch catches), as a real run does: a verdict
   * ("does it fit?") needs no more, and a run that fails early then costs little. */
  untilOom?: boolean;
}

export interface ReplayOom {
  /** Index of the request that failed. */
  request: number;
  /** Rounded size, as PyTorch's oom trace event has it. */
  size: number;
  message: string;
  /** Why it failed, in words. */
  why: string[];
  /** The cap its last cudaMalloc needed, and whether the cap refused one before (OomInfo's). */
  capNeeded: number;
  capRefusedBefore: boolean;
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
  /** The OOMs the program saw: PyTorch raised each (the first ends a real run). */
  ooms: ReplayOom[];
  /** The OOMs PyTorch caught (a cuDNN workspace's: RequestStream.cudnnWorkspaces): the program went on. */
  caught: ReplayOom[];
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
  caught: ReplayOom[];
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
  const countOnly = statsOnly || options.keepEvents === false;
  const events = new EventLog(countOnly ? 0 : Math.ceil(stream.length * 1.6) + 64, { countOnly });
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
    // The log from the start, though the state adopted below records nothing (its events are
    // dropped): a sink swapped after adoption made the allocator's record calls megamorphic, so
    // V8 stopped inlining them and boxed each address passed (n150's replay 4-5% slower).
    sink: events,
  });
  const blocks: (Block | null)[] = new Array<Block | null>(stream.idCount).fill(null);

  // State from before the trace began; it records no events.
  const adopted = adoptInitialState(allocator, placement, stream);
  for (const [blockId, block] of adopted.blocks) blocks[blockId] = block;
  events.clear();

  const allocatedSeries = new Float64Array(statsOnly ? 0 : seriesLength);
  // Active equals allocated unless frees are deferred: then one array serves both.
  const active = allocator.stats.countActive ? new Float64Array(statsOnly ? 0 : seriesLength) : allocatedSeries;
  const series: ReplaySeries = { allocated: allocatedSeries, reserved: new Float64Array(statsOnly ? 0 : seriesLength), active, retries: [] };
  return runOf(stream, blocks, {
    allocator,
    events,
    statsOnly,
    series,
    ooms: [],
    caught: [],
    divergences,
    problems: adopted.problems,
    atPeak: { request: -1, reserved: 0, allocated: 0, largestFreeBlock: 0 },
    emptyCacheAfter: new Set(options.emptyCacheAfter ?? []),
    resetPeakAfter: new Set(options.resetPeakAfter ?? []),
    next: 0,
    nextCompletion: 0,
    nextRecordedCall: 0,
    nextRelease: 0,
  });
}

/** What a checkpoint keeps of a run: all but its stream and its blocks by id. */
type RunState = Omit<ReplayRun, 'blocks' | 'stream'>;

/**
 * A run, fresh or restored, built by one object literal (and its peak by another): both then have one
 * hidden class, so the replay loop, which reads them per request, stays monomorphic.
 */
function runOf(stream: RequestStream, blocks: (Block | null)[], s: RunState): ReplayRun {
  const { request, reserved, allocated, largestFreeBlock } = s.atPeak;
  return {
    stream,
    allocator: s.allocator,
    blocks,
    events: s.events,
    statsOnly: s.statsOnly,
    series: s.series,
    ooms: s.ooms,
    caught: s.caught,
    divergences: s.divergences,
    problems: s.problems,
    atPeak: { request, reserved, allocated, largestFreeBlock },
    emptyCacheAfter: s.emptyCacheAfter,
    resetPeakAfter: s.resetPeakAfter,
    next: s.next,
    nextCompletion: s.nextCompletion,
    nextRecordedCall: s.nextRecordedCall,
    nextRelease: s.nextRelease,
  };
}

/** The recording's own calls after request `i`: pools released, then empty_cache. Returns the next
 * request with calls after it. */
function recordedCalls(run: ReplayRun, i: number): number {
  const { after: releasedAfter, pool: released } = run.stream.releasedPools;
  while (releasedAfter[run.nextRelease] === i) run.allocator.releasePool(released[run.nextRelease++]!);
  const { recordedEmptyCache: after, recordedEmptyCachePool: pool } = run.stream;
  while (after[run.nextRecordedCall] === i) run.allocator.emptyCache(pool[run.nextRecordedCall++]!);
  return nextRecordedCall(run);
}

/** The request after which the recording's next own call comes (-1: before the first; -2: none left). */
function nextRecordedCall(run: ReplayRun): number {
  const { releasedPools, recordedEmptyCache } = run.stream;
  const release = run.nextRelease < releasedPools.after.length ? releasedPools.after[run.nextRelease]! : Infinity;
  const call = run.nextRecordedCall < recordedEmptyCache.length ? recordedEmptyCache[run.nextRecordedCall]! : Infinity;
  const at = Math.min(release, call);
  return at === Infinity ? -2 : at;
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

/** Applies requests run.next .. end - 1 (with `untilOom`, up to the first OOM the program sees). */
function advance(run: ReplayRun, end: number, untilOom = false): void {
  const { allocator, blocks, events, statsOnly, series, ooms, caught, atPeak, emptyCacheAfter, resetPeakAfter } = run;
  const { kind, id, size, stream: streams, pool, length, cudnnWorkspaces } = run.stream;
  const { before: completionBefore, id: completionId } = run.stream.completions;
  const { allocated: allocatedSeries, reserved: reservedSeries, active: activeSeries } = series;
  const countActive = activeSeries !== allocatedSeries;
  const inserted = emptyCacheAfter.size > 0 || resetPeakAfter.size > 0;
  const stats = allocator.stats;
  let c = run.nextCompletion;
  // The next request after which a deferred free completes, or the recording calls empty_cache or
  // releases a pool (-2: none): most requests have neither, and a local is all they read.
  let completionAt = c < completionBefore.length ? completionBefore[c]! : -2;
  let callAt = nextRecordedCall(run);
  if (run.next === 0 && callAt === -1) callAt = recordedCalls(run, -1);
  for (let i = run.next; i < end; i++) {
    events.currentRequest = i;
    // Deferred frees whose streams are done complete first, as malloc processes CUDA events first.
    if (completionAt === i) {
      while (completionBefore[c] === i) completeFree(run, completionId[c++]!);
      completionAt = c < completionBefore.length ? completionBefore[c]! : -2;
    }
    const blockId = id[i]!;
    const k = kind[i];
    if (k === RequestKind.alloc) {
      const retriesBefore = statsOnly ? 0 : stats.counter('num_alloc_retries');
      const block = allocator.malloc(size[i]!, streams[i]!, blockId, pool[i]!);
      if (!statsOnly && stats.counter('num_alloc_retries') !== retriesBefore) series.retries.push(i);
      if (block) blocks[blockId] = block;
      else {
        const { size: rounded, message, why, capNeeded, capRefusedBefore } = allocator.lastOom!;
        const oom = { request: i, size: rounded, message, why, capNeeded, capRefusedBefore };
        // cuDNN runs another engine config: the conv goes on without this workspace (its free then frees nothing).
        if (cudnnWorkspaces.has(blockId)) caught.push(oom);
        else {
          ooms.push(oom);
          if (untilOom) end = i + 1;
        }
      }
    } else {
      const block = blocks[blockId];
      // No block: its alloc failed in this replay, so the program never got a tensor to free.
      if (block) {
        // A deferred free keeps its block here until the free completes.
        allocator.free(block, k === RequestKind.freeDeferred);
        if (k === RequestKind.free) blocks[blockId] = null;
      }
    }
    if (callAt === i) callAt = recordedCalls(run, i);
    if (inserted) {
      if (emptyCacheAfter.has(i)) allocator.emptyCache();
      if (resetPeakAfter.has(i)) allocator.resetPeakStats();
    }
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

/**
 * A look at the allocator partway through a replay: `see` runs once request `after` is applied (at
 * the end, if the replay stops before). It reads the state and must not change it. So a view of the
 * state at a cursor comes from the same pass as the whole run, rather than a second replay up to it.
 */
export interface ReplayVisit {
  after: number;
  see(allocator: CachingAllocator, oomsSoFar: readonly ReplayOom[]): void;
}

export function replay(stream: RequestStream, options: ReplayOptions, visit?: ReplayVisit): ReplayResult {
  const n = Math.min(stream.length, (options.until ?? Infinity) + 1);
  const run = startReplay(stream, options, n);
  if (visit) {
    advance(run, Math.max(0, Math.min(n, visit.after + 1)));
    visit.see(run.allocator, run.ooms);
  }
  advance(run, n, options.untilOom);
  const { allocator, atPeak, events, ooms, caught, divergences, problems, series } = run;
  return { allocator, atPeak, events, stats: allocator.memoryStats(), ooms, caught, divergences, problems, series };
}

/** A copy of a run at a request, for a cursor to go back to (blocks by id kept sparse: most are null). */
interface Checkpoint {
  state: RunState;
  ids: Int32Array;
  live: Block[];
}

/** What a checkpoint shares with the run instead of copying: the stream and its arrays, the config. */
function sharedOf(run: ReplayRun): Set<object> {
  const shared = new Set<object>([run.stream, run.allocator.config]);
  for (const v of Object.values(run.stream)) if (typeof v === 'object' && v !== null) shared.add(v as object);
  return shared;
}

/**
 * A checkpoint's objects, copied onto blanks their own constructors make (see fork and
 * ALLOCATOR_COPIERS): a restored run then has the hidden classes of a fresh one, and the replay's
 * hot code, which runs on both, keeps its optimized code.
 */
export const CHECKPOINT_COPIERS: Copiers = new Map<object, Copier>([
  ...ALLOCATOR_COPIERS,
  [EventLog.prototype, constructedCopier(() => new EventLog(0, { countOnly: true }))],
  [DriverPlacement.prototype, constructedCopier(() => new DriverPlacement())],
  [RecordedPlacement.prototype, constructedCopier(() => new RecordedPlacement([], new DriverPlacement(), () => {}))],
  [AddressReservations.prototype, constructedCopier(() => new AddressReservations())],
  [MaxTree.prototype, constructedCopier(() => new MaxTree())],
]);

/**
 * The run's live blocks by id: every block of the allocator that its id still maps to. (An entry for
 * a block an empty_cache completed, left until its completion comes, is dropped: completeFree
 * skips it all the same.) Walking the segments costs the state's size, not the ids'.
 */
function liveBlocks(run: ReplayRun): { ids: Int32Array; live: Block[] } {
  const ids: number[] = [];
  const live: Block[] = [];
  for (const segment of run.allocator.segments.values()) {
    for (let b: Block | null = segment.head; b; b = b.next) {
      if (b.tag >= 0 && run.blocks[b.tag] === b) {
        ids.push(b.tag);
        live.push(b);
      }
    }
  }
  return { ids: Int32Array.from(ids), live };
}

function checkpointOf(run: ReplayRun, shared: ReadonlySet<object>): Checkpoint {
  const { blocks: _blocks, stream: _stream, ...state } = run;
  return fork({ state, ...liveBlocks(run) }, shared, CHECKPOINT_COPIERS);
}

/** `blocks`: an array of nulls to reuse (allocating one per restore costs more than the rest). */
function restore(checkpoint: Checkpoint, stream: RequestStream, shared: ReadonlySet<object>, blocks?: (Block | null)[]): ReplayRun {
  const { state, ids, live } = fork(checkpoint, shared, CHECKPOINT_COPIERS);
  blocks ??= new Array<Block | null>(stream.idCount).fill(null);
  for (let k = 0; k < ids.length; k++) blocks[ids[k]!] = live[k]!;
  return runOf(stream, blocks, state);
}

/** How many blocks (live and free) the run's segments hold: what a checkpoint of it copies. */
function blockCount(run: ReplayRun): number {
  let n = 0;
  for (const segment of run.allocator.segments.values()) for (let b: Block | null = segment.head; b; b = b.next) n++;
  return n;
}

/**
 * Blocks all checkpoints together hold at most, whatever the trace's length (~570 bytes each: ~150 MB).
 * At the default settings the traces here hold under a thousand blocks a checkpoint, far inside it; a
 * small max_split_size_mb makes thousands of segments, and a checkpoint at every boundary held them all
 * (train_gpt2-n150 at 20 MiB: 4.5k blocks each, 346 MB of checkpoints, 1.4 s to make them after each
 * replay). Within the budget a checkpoint of S blocks comes at least S * length / budget requests after
 * the one before, so the checkpoints of a large state are fewer and farther apart.
 */
const CHECKPOINT_BLOCKS = 2 ** 18;

/**
 * The allocator at any request. A move forward applies the requests between; a move back starts from
 * the nearest checkpoint before (a copy of the run kept at a multiple of `every` requests as the
 * cursor first passes there), so that no move replays more than `every` requests once checkpoints
 * exist, or more than the spacing a large state gets (CHECKPOINT_BLOCKS). For
 * cursors that play, step and seek (the views), not for figures that need the whole run.
 */
export class ReplayCursor {
  private run: ReplayRun | null = null;
  /** Where `run` began (request, and its live ids then): what its blocks array holds beyond nulls. */
  private origin: { next: number; ids: Int32Array } = { next: 0, ids: new Int32Array(0) };
  /** checkpoints[k]: the run before request k * every (null: that boundary is passed over). */
  private readonly checkpoints: (Checkpoint | null | undefined)[] = [];
  private shared: ReadonlySet<object> | null = null;
  /** A run that goes ahead of the cursor to make checkpoints (warm()). */
  private scout: ReplayRun | null = null;
  private warmed = false;
  readonly every: number;
  /** Requests between checkpoints per block a checkpoint holds, at least. */
  private readonly perBlock: number;
  /** Blocks the checkpoints hold. */
  private held = 0;

  constructor(
    private readonly stream: RequestStream,
    private readonly options: Omit<ReplayOptions, 'until' | 'statsOnly'>,
    /** Default: 2048 requests, or more so that a trace has at most 256 checkpoints. */
    every?: number,
    /** Blocks all checkpoints together may hold (about: see runTo). */
    blockBudget = CHECKPOINT_BLOCKS,
  ) {
    this.every = every ?? Math.max(2048, Math.ceil(stream.length / 256));
    this.perBlock = stream.length / blockBudget;
  }

  /** The allocator after request `index` (its state belongs to this cursor: read it, do not change it). */
  at(index: number): CachingAllocator {
    const end = Math.min(this.stream.length, index + 1);
    const run = this.run;
    if (!run || run.next > end || end - run.next > this.every) {
      const k = this.checkpointBefore(end);
      if (k > 0 && (!run || run.next > end || run.next < k * this.every)) {
        const checkpoint = this.checkpoints[k]!;
        this.run = restore(checkpoint, this.stream, this.shared!, run ? this.recycle(run) : undefined);
        this.origin = { next: k * this.every, ids: checkpoint.ids };
      } else if (!run || run.next > end) {
        this.run = this.start();
        this.origin = { next: 0, ids: liveBlocks(this.run).ids };
      }
    }
    this.runTo(this.run!, end);
    return this.run!.allocator;
  }

  /**
   * Makes checkpoints ahead, up to `requests` requests' worth of replay per call (so that a worker
   * can answer other calls between). True once every checkpoint of the trace exists.
   */
  warm(requests: number): boolean {
    const n = this.stream.length;
    if (this.warmed || this.checkpointBefore(n) * this.every + this.every > n) return true;
    if (!this.scout) {
      const k = this.checkpointBefore(n);
      this.scout = k > 0 ? restore(this.checkpoints[k]!, this.stream, this.shared!) : this.start();
    }
    const scout = this.scout;
    this.runTo(scout, Math.min(n, scout.next + requests));
    // Past the last boundary: every checkpoint there will be exists (some boundaries are passed over).
    this.warmed = scout.next + this.every > n;
    if (this.warmed) this.scout = null;
    return this.warmed;
  }

  /** Checkpoints made so far, and the blocks they hold (for tests and benchmarks). */
  get checkpointsHeld(): { checkpoints: number; blocks: number } {
    return { checkpoints: this.checkpoints.filter(Boolean).length, blocks: this.held };
  }

  /** `run`'s blocks array set back to nulls, or undefined when a new one is cheaper. */
  private recycle(run: ReplayRun): (Block | null)[] | undefined {
    const { kind, id } = this.stream;
    const { next, ids } = this.origin;
    if (run.next - next > this.stream.idCount / 8) return undefined;
    const blocks = run.blocks;
    for (let k = 0; k < ids.length; k++) blocks[ids[k]!] = null;
    for (let i = next; i < run.next; i++) if (kind[i] === RequestKind.alloc) blocks[id[i]!] = null;
    return blocks;
  }

  private start(): ReplayRun {
    const run = startReplay(this.stream, { ...this.options, statsOnly: true }, 0);
    this.shared ??= sharedOf(run);
    return run;
  }

  /** The last checkpoint at or before request `end` (0: none; the start needs none). */
  private checkpointBefore(end: number): number {
    for (let k = Math.floor(end / this.every); k > 0; k--) if (this.checkpoints[k]) return k;
    return 0;
  }

  /**
   * Advances `run` to `end`, leaving a checkpoint at each boundary it passes that has none, unless the
   * one before is nearer than the state's size asks (the boundary is then passed over for good).
   */
  private runTo(run: ReplayRun, end: number): void {
    while (run.next < end) {
      const stop = Math.min(end, (Math.floor(run.next / this.every) + 1) * this.every);
      advance(run, stop);
      const k = stop / this.every;
      if (stop >= this.stream.length || !Number.isInteger(k) || this.checkpoints[k] !== undefined) continue;
      // Each checkpoint's blocks are paid for by the requests since the one before, so that together
      // they hold at most the budget (twice it where a seek's run left one between two others).
      const since = (k - this.checkpointBefore(stop - 1)) * this.every;
      const blocks = blockCount(run);
      const take = since >= blocks * this.perBlock;
      this.checkpoints[k] = take ? checkpointOf(run, this.shared!) : null;
      if (take) this.held += blocks;
    }
  }
}
