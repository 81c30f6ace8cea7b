// A recorded device trace -> the request stream behind it, as memory_viz reads traces: each
// (address, reuse) gets a logical id, so ids survive a change of config while addresses do not.
// Besides allocs and frees the stream keeps what the program did that the allocator only saw the
// effects of: frees deferred by record_stream and their completions, empty_cache() calls, and the
// private pool (CUDA graphs, MemPool) each allocation drew from.
import { counted } from '../../lib/counted';
import { DEFAULT_CONFIG, type AllocatorConfig } from '../../allocator/config';
import { roundSize, segmentSizeFor } from '../../allocator/sizes';
import { Action } from '../../allocator/trace-action';
import { AddressTable } from '../../lib/address-table';
import type { Snapshot, SnapshotSegment } from '../snapshot/snapshot';
import { CUDNN_WORKSPACE, FROM_EMPTY_CACHE, POOL_RELEASE, traceColumnsFromEntries, type TraceColumns } from '../snapshot/trace-columns';
import { PoolInference, type Incarnation } from './pool-inference';
import { RequestStreamBuilder, type InitialBlock, type InitialSegment, type RequestStream } from './request-stream';
import { CapEvidence } from './recorded-cap';
import { inferInitialBlockSizes, initialMappings } from './window-start';
import { grouped } from '../../lib/grouped';

export interface TraceStreamOptions {
  device?: number;
  /** The recording's config (it decides how blocks made before the trace were rounded). */
  config?: AllocatorConfig;
  /** The stream's columns in shared memory (see RequestStreamBuilder). */
  sharedMemory?: boolean;
}

export function requestStreamFromSnapshot(snapshot: Snapshot, options: TraceStreamOptions = {}): RequestStream {
  const entries = snapshot.device_traces[options.device ?? 0] ?? [];
  return requestStreamFromTrace(traceColumnsFromEntries(entries), snapshot.segments, options);
}

const SMALL_BUFFER = 2 * 1024 * 1024;

/**
 * Whether the segment_free / segment_unmap run starting at `i` is an empty_cache() call: its stack
 * says so where one was recorded. Else: a malloc frees cached segments only when a new one did not fit
 * (or gc ran), and then always goes on to a new segment or an OOM; a run that ends in anything else
 * (a free, an alloc served from the cache, the end of the trace) was no malloc's. Without stacks, an
 * empty_cache() right before an allocation that needs a new segment looks like a malloc's release.
 */
function isEmptyCacheRun(trace: TraceColumns, i: number): boolean {
  const { action, flags, length } = trace;
  // Where stacks were recorded, they say so (a MemPool going away empties its own cache).
  if (flags[i]! & (FROM_EMPTY_CACHE | POOL_RELEASE)) return true;
  let j = i;
  while (j < length && (action[j] === Action.segment_free || action[j] === Action.segment_unmap || action[j] === Action.free_completed)) j++;
  const next = j < length ? action[j] : -1;
  return next !== Action.segment_alloc && next !== Action.segment_map && next !== Action.oom;
}

/** `trace`: the device's trace in columns; `segments`: the snapshot's final segments (all devices). */
export function requestStreamFromTrace(
  trace: TraceColumns,
  segments: readonly SnapshotSegment[],
  { device = 0, config = DEFAULT_CONFIG, sharedMemory = false }: TraceStreamOptions = {},
): RequestStream {
  const finalSegments = segments.filter((s) => (s.device ?? 0) === device);
  const pools = new PoolInference(finalSegments, trace.recordedPools, (size) => roundSize(size, config));
  // Each alloc and free_requested is one request (an oom two): about 2/3 of the entries.
  const b = new RequestStreamBuilder(Math.ceil(trace.length * 0.7), sharedMemory);
  const liveBlocks = new AddressTable(); // addr -> id
  /** Blocks whose free is deferred (record_stream), by address, until their free_completed. */
  const pendingBlocks = new AddressTable();
  const liveSegments = new Map<number, number>(); // addr -> size, made during the trace
  const initialSegments: InitialSegment[] = [];
  const initialBlocks: InitialBlock[] = [];
  const recordedSegments: { addr: number; size: number }[] = [];
  const recordedMappings: { addr: number; size: number }[] = [];
  /** segment_map (+1) and segment_unmap (-1) ranges in order, to work out what was mapped at the start. */
  const mappingChanges: { addr: number; size: number; sign: 1 | -1 }[] = [];
  const failedInRecording = new Set<number>();
  const cudnnWorkspaces = new Set<number>();
  let caughtOoms = 0;
  const problems: string[] = [];
  const problem = (text: string): void => {
    if (problems.length < 20) problems.push(text);
  };
  const at = (i: number): string => `device_traces[${device}][${i}]`;
  const withPools = pools.active;
  /** The recording's empty_cache calls: after which request, and the segments each freed. */
  const calls: { after: number; freed: Incarnation[]; onePool: boolean }[] = [];
  let call: (typeof calls)[number] | null = null;
  /** Releases a segment_alloc follows (a malloc's release and retry, the cap's evidence), each with the
   * retry's reserved-before and size: a MemPool going away looks the same where no stack says so, and
   * is told apart once the pools are known (the segments it freed are a gone MemPool's). */
  const retries: { call: (typeof calls)[number]; before: number; size: number }[] = [];
  let deferred = 0;
  const cap = new CapEvidence(config);
  /** Reserved bytes (relative to the start) before the cache release a malloc is making, or -1. */
  let releasingFrom = -1;
  /** expandable_segments: reserved bytes before a release that pages were then mapped after, or -1:
   * the failed attempt asked for the request's whole segment size, known at its alloc. */
  let mappedAfterRelease = -1;
  const recordedOoms: number[] = [];

  const { action, addr: addrs, size: sizes, stream: streams, flags, length } = trace;
  for (let i = 0; i < length; i++) {
    const addr = addrs[i]!;
    const size = sizes[i]!;
    switch (action[i]) {
      case Action.alloc: {
        if (mappedAfterRelease >= 0) {
          cap.retried(mappedAfterRelease, segmentSizeFor(roundSize(size, config), config.largeSegmentSize));
          mappedAfterRelease = -1;
        }
        if (liveBlocks.get(addr) >= 0) {
          problem(`${at(i)} allocates ${addr} again while the block allocated there before was never freed: this second allocation is left out.`);
          break;
        }
        const id = b.newId();
        liveBlocks.set(addr, id);
        // A pool not known yet (-1) is settled at the end (pools.resolve).
        const pool = withPools ? pools.alloc(addr, size, streams[i]!, i, b.length) : 0;
        b.alloc(id, size, streams[i]!, i, -1, Math.max(0, pool));
        if (flags[i]! & CUDNN_WORKSPACE) cudnnWorkspaces.add(id);
        break;
      }
      case Action.free_requested: {
        const stream = streams[i]!;
        const source = i;
        let id = liveBlocks.get(addr);
        if (id < 0) {
          if (pendingBlocks.get(addr) >= 0) {
            problem(`${at(i)} frees ${addr}, whose block was already freed and not yet completed: left out.`);
            break;
          }
          // Allocated before recording began.
          id = b.newId();
          initialBlocks.push({ id, addr, size: 0, requested: size, stream, source });
        } else {
          liveBlocks.delete(addr);
        }
        // A free completes at once unless other streams still use the block: then its free_completed
        // comes later, when a malloc finds their events done.
        const now = i + 1 < length && action[i + 1] === Action.free_completed && addrs[i + 1] === addr;
        if (now) {
          i++;
          if (withPools) pools.freed(addr);
        }
        else {
          pendingBlocks.set(addr, id);
          deferred++;
        }
        b.free(id, size, stream, source, !now);
        break;
      }
      case Action.free_completed: {
        let id = pendingBlocks.get(addr);
        if (withPools) pools.freed(addr);
        if (id >= 0) pendingBlocks.delete(addr);
        else {
          // Freed before recording began, completed in it.
          id = b.newId();
          initialBlocks.push({ id, addr, size: 0, requested: size, stream: streams[i]!, pending: true, source: i });
          deferred++;
        }
        b.complete(id);
        break;
      }
      case Action.segment_alloc:
        recordedSegments.push({ addr, size });
        liveSegments.set(addr, size);
        if (withPools) pools.segmentMade(addr, size, streams[i]!, i);
        // After a malloc's release, the retry: its first cudaMalloc had not fit (weighed once the pools are known).
        if (releasingFrom >= 0 && call) retries.push({ call, before: releasingFrom, size });
        else if (releasingFrom >= 0) cap.retried(releasingFrom, size);
        releasingFrom = -1;
        cap.reserved(size);
        break;
      case Action.segment_free:
      case Action.segment_unmap:
        if (action[i - 1] !== Action.segment_free && action[i - 1] !== Action.segment_unmap) {
          call = null;
          if (isEmptyCacheRun(trace, i)) calls.push((call = { after: b.length - 1, freed: [], onePool: (flags[i]! & POOL_RELEASE) !== 0 }));
          else {
            releasingFrom = cap.now;
            call = { after: b.length - 1, freed: [], onePool: false };
          }
        }
        cap.released(size);
        if (action[i] === Action.segment_unmap) mappingChanges.push({ addr, size, sign: -1 });
        else {
          const gone = pools.segmentGone(addr, size, streams[i]!, i);
          call?.freed.push(gone);
          if (!liveSegments.delete(addr)) {
            initialSegments.push({ addr, size, stream: streams[i]!, small: size === SMALL_BUFFER, pool: withPools ? gone.pool : 0 });
          }
        }
        break;
      case Action.oom: {
        releasingFrom = -1;
        cap.failed(size, addr); // an oom row's addr is device_free
        // The tensor never existed in the recording, so nothing frees it there.
        const id = b.newId();
        failedInRecording.add(id);
        if (flags[i]! & CUDNN_WORKSPACE) {
          cudnnWorkspaces.add(id);
          caughtOoms++;
        } else recordedOoms.push(b.length);
        b.alloc(id, size, streams[i]!, i);
        b.free(id, size, streams[i]!, -1);
        break;
      }
      case Action.segment_map:
        if (releasingFrom >= 0) mappedAfterRelease = releasingFrom;
        releasingFrom = -1;
        cap.reserved(size);
        recordedMappings.push({ addr, size });
        mappingChanges.push({ addr, size, sign: 1 });
        break;
      default:
        break; // snapshot markers, user-defined entries
    }
  }

  // Segments and blocks alive at the end that no event made were there from the start.
  const finalSizes = new Map<number, number>();
  for (const segment of finalSegments) {
    const pool = withPools ? pools.finalPoolAt(segment.address) : 0;
    if (!segment.is_expandable && !liveSegments.has(segment.address)) {
      initialSegments.push({
        addr: segment.address,
        size: segment.total_size,
        stream: segment.stream,
        small: segment.segment_type === 'small',
        pool,
      });
    }
    let addr = segment.address;
    for (const block of segment.blocks) {
      if (block.state !== 'inactive') {
        finalSizes.set(addr, block.size);
        // A block pending at the end and freed before the trace began was never seen freed: it is live throughout.
        if (liveBlocks.get(addr) < 0 && pendingBlocks.get(addr) < 0 && !liveSegments.has(segment.address)) {
          const id = b.newId();
          const pending = block.state === 'active_pending_free';
          initialBlocks.push({ id, addr, size: block.size, requested: block.requested_size, stream: segment.stream, ...(pending ? { pending } : {}) });
        }
      }
      addr += block.size;
    }
  }

  const finalRanges = finalSegments
    .filter((s) => s.is_expandable)
    .map((s) => ({ addr: s.address, size: s.total_size, stream: s.stream, small: s.segment_type === 'small', pool: withPools ? pools.finalPoolAt(s.address) : 0 }));
  initialSegments.push(...initialMappings(finalRanges, mappingChanges));
  inferInitialBlockSizes(initialBlocks, initialSegments, finalSizes, config, trace);
  const notes: string[] = [];
  // A block freed but never allocated in the trace tells of a mid-run start only when a segment that
  // existed before the trace holds it; one that no segment held is an inconsistency (the replay names
  // its entry and leaves it out), not evidence of anything before the trace.
  const held = initialBlocks.filter((blk) => initialSegments.some((s) => blk.addr >= s.addr && blk.addr < s.addr + s.size)).length;
  // (A snapshot with no history at all says so itself: replay-snapshot.ts's NO_HISTORY.)
  if ((initialSegments.length > 0 || held > 0) && length > 0) {
    notes.push(
      `The trace begins mid-run: ${counted(initialSegments.length, 'segment')} and ${counted(held, 'live block')} existed ` +
        'before its first event; they are rebuilt from the final snapshot and the events of the trace.',
    );
  }
  if (failedInRecording.size > 0) {
    notes.push(
      `${counted(failedInRecording.size, 'request')} failed with OOM in the recording, so how long such a tensor lives is ` +
        'unknown; where a replay lets one succeed, splitscope frees it right after its allocation.',
    );
  }
  if (caughtOoms > 0) {
    notes.push(
      `${counted(caughtOoms, 'OOM')} of the recording came from cuDNN convolutions' workspaces, which PyTorch catches: ` +
        'it ran another engine config (one that needs less workspace), and the program went on.',
    );
  }
  const stream = b.finish({
    recordedOoms: Int32Array.from(recordedOoms),
    failedInRecording,
    cudnnWorkspaces,
    initialSegments,
    initialBlocks,
    recordedSegments,
    recordedMappings,
    pools: pools.pools,
    notes,
  });
  const released = withPools
    ? pools.resolve(stream.pool, calls.map((c) => c.freed), calls.filter((c) => c.onePool).map((c) => c.freed), retries.map((r) => r.call.freed))
    : new Set<readonly Incarnation[]>();
  for (const r of retries) {
    if (!released.has(r.call.freed)) cap.retried(r.before, r.size);
    else calls.push({ ...r.call, onePool: true });
  }
  calls.sort((x, y) => x.after - y.after);
  let initialReserved = 0;
  for (const s of initialSegments) initialReserved += s.size;
  const recordedCap = cap.cap(initialReserved);
  if (recordedCap) stream.recordedCap = recordedCap;
  Object.assign(stream, recordedCalls(calls, (x) => (withPools ? x.pool : 0)));
  if (deferred > 0) {
    notes.push(
      `${grouped(deferred)} frees were deferred by record_stream (the block was still in use on another stream); ` +
        'each completes where the recording completed it.',
    );
  }
  const poolReleases = calls.filter((c) => c.onePool).length;
  if (calls.length > poolReleases) {
    notes.push(`The program called torch.cuda.empty_cache() ${counted(calls.length - poolReleases, 'time')} (seen where it freed segments); each replay makes those calls too.`);
  }
  if (poolReleases > 0) {
    notes.push(`A MemPool went away ${counted(poolReleases, 'time')}, its cached segments freed with it (seen where it freed them); each replay releases it there too.`);
  }
  if (pools.pools.length > 1) {
    const named = (p: readonly [number, number], k: number): string => `(${p[0]}, ${p[1]})${pools.gone.has(k + 1) ? ', gone before the end' : ''}`;
    notes.push(
      `Private pools (CUDA graphs, torch.compile's reduce-overhead mode, MemPool): ${pools.pools.slice(1).map(named).join('; ')}; ` +
        'each request draws from the pool its block was in, and a pool\'s cached blocks serve only that pool.',
    );
  }
  if (pools.guessed.length > 0) {
    const requests = pools.guessed.flatMap((inc) => inc.requests);
    notes.push(
      `The pool of ${counted(requests.length, 'allocation')} in ${counted(pools.guessed.length, 'segment')} freed before the end (first at request ${grouped(Math.min(...requests))}) ` +
        'is a guess: a 2.11 trace records no pool per entry, the final snapshot no longer shows those segments, and the allocations around them ' +
        "draw from different pools. They are taken as the default pools'; where a MemPool or a graph's pool served them, the replay can differ from there.",
    );
  }
  if (problems.length > 0) notes.push(...problems.map((p) => `Inconsistent trace: ${p}`));
  return stream;
}

/**
 * The recording's empty_cache calls, with what their frees say of private pools: one that freed only a
 * private pool's segments was that pool's emptyCache(id) (a MemPool going away), and a pool whose
 * segments an empty_cache freed had been released (its graph or MemPool gone) by then.
 */
function recordedCalls(
  calls: readonly { after: number; freed: readonly Incarnation[] }[],
  poolOf: (freed: Incarnation) => number,
): Pick<RequestStream, 'recordedEmptyCache' | 'recordedEmptyCachePool' | 'releasedPools'> {
  const after: number[] = [];
  const pool: number[] = [];
  const releasedAfter: number[] = [];
  const released: number[] = [];
  const known = new Set<number>();
  for (const call of calls) {
    const pools = new Set(call.freed.map(poolOf));
    for (const p of pools) {
      if (p === 0 || known.has(p)) continue;
      known.add(p);
      releasedAfter.push(call.after);
      released.push(p);
    }
    after.push(call.after);
    pool.push(pools.size === 1 && !pools.has(0) ? [...pools][0]! : 0);
  }
  return {
    recordedEmptyCache: Int32Array.from(after),
    recordedEmptyCachePool: Int32Array.from(pool),
    releasedPools: { after: Int32Array.from(releasedAfter), pool: Int32Array.from(released) },
  };
}
