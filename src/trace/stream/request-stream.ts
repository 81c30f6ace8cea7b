// The program's side of a run: alloc(id, size, stream) and free(id), with nothing the allocator decided
// (plus what the program did that the allocator saw: deferred frees completing, empty_cache calls).
// Replaying it under another config asks "what would the allocator have done with these requests?".

import { growColumns, makeColumns, trimColumns, type ColumnsOf } from '../../lib/columns';
import type { RecordedCap } from './recorded-cap';

export const enum RequestKind {
  alloc = 0,
  /** free_requested and free_completed together: the block is reusable at once. */
  free = 1,
  /** free_requested of a block another stream still uses (record_stream): it stays pending, neither
   * allocated nor reusable, until its completion (RequestStream.completions) comes. */
  freeDeferred = 2,
}

/** A private pool's id as PyTorch writes segment_pool_id; (0, 0) is the default pools. */
export type PoolId = readonly [number, number];
export const DEFAULT_POOL: PoolId = [0, 0];

/** A segment (and its live blocks) that existed before the first request: a trace that begins mid-run. */
export interface InitialSegment {
  addr: number;
  size: number;
  stream: number;
  small: boolean;
  /** A mapped range of an expandable segment rather than a cudaMalloc'd segment. */
  expandable?: boolean;
  /** Its pool: an index into RequestStream.pools (0, or absent: the default pools). */
  pool?: number;
}

export interface InitialBlock {
  id: number;
  addr: number;
  /** Block size; exact when the final snapshot shows it, else inferred (see request-stream-from-trace.ts). */
  size: number;
  requested: number;
  stream: number;
  /** Freed before the trace began and still pending (a completion in the trace releases it). */
  pending?: boolean;
  /** The trace entry that freed it (for messages, and the end of what the trace can say about it). */
  source?: number;
}

export interface RequestStream {
  length: number;
  kind: Uint8Array;
  /** The logical block id each request concerns. */
  id: Int32Array;
  /** Bytes requested (for a free: the bytes its alloc requested). */
  size: Float64Array;
  stream: Float64Array;
  /** For each request, the index of the source event it came from (-1 if synthetic), e.g. for stack frames. */
  source: Int32Array;
  /** For an alloc, the logical id of a block the op that produces it reads (-1: unknown, as in a
   * recorded trace). The GPU arena's op kernel reads that block while it writes the new one. */
  input: Int32Array;
  /** For an alloc, the pool it draws from: an index into `pools` (0: the default pools). */
  pool: Int32Array;
  /** Pool ids by index; pools[0] is the default, (0, 0). */
  pools: PoolId[];
  /** Deferred frees complete at the start of request before[k], in k order (as the CUDA events of
   * other streams complete when malloc processes them); before[k] === length: after the last. */
  completions: { before: Int32Array; id: Int32Array };
  /** The recording's own empty_cache calls, after these request indices (-1: before the first), in
   * order; recordedEmptyCachePool[k] is 0 for torch.cuda.empty_cache(), else the private pool of a
   * MemPool's emptyCache(id) (its destructor's). */
  recordedEmptyCache: Int32Array;
  recordedEmptyCachePool: Int32Array;
  /** Private pools whose graph or MemPool went away (releasePool), before the empty_cache call after
   * the same request: their cached blocks may be freed from then on. */
  releasedPools: { after: Int32Array; pool: Int32Array };
  /** Number of logical ids; ids are 0..idCount-1. */
  idCount: number;
  /** Ids whose alloc failed with OOM in the recording (they never existed there) ... */
  failedInRecording: Set<number>;
  /** ... and those allocs' request indices: the OOMs the program saw (not those cuDNN caught). */
  recordedOoms: Int32Array;
  /**
   * Ids a cuDNN convolution allocated as its workspace (their stack says so: trace-columns.ts's
   * CUDNN_WORKSPACE). When one fails, PyTorch catches the OOM and runs another engine config, and the
   * program goes on without it; a recording's such OOMs are in failedInRecording, not recordedOoms.
   */
  cudnnWorkspaces: Set<number>;
  /** The memory cap the recording's OOMs and retries show, when they show one. */
  recordedCap?: RecordedCap;
  initialSegments: InitialSegment[];
  initialBlocks: InitialBlock[];
  /** The recording's cudaMalloc calls in order (empty for generated workloads). */
  recordedSegments: { addr: number; size: number }[];
  /** The recording's segment_map events in order (expandable_segments; empty otherwise). */
  recordedMappings: { addr: number; size: number }[];
  /** What building the stream had to assume, in words for the user. */
  notes: string[];
  /** Generated workloads: the request index at which each step (iteration) begins; empty for traces. */
  stepStarts: Int32Array;
}

/** The stream's typed columns, one entry per request. */
export const REQUEST_COLUMNS = {
  kind: Uint8Array,
  id: Int32Array,
  size: Float64Array,
  stream: Float64Array,
  source: Int32Array,
  input: Int32Array,
  pool: Int32Array,
} as const;

/** Appends requests to growable columns; `finish()` trims them into a RequestStream. */
export class RequestStreamBuilder {
  private n = 0;
  private c: ColumnsOf<typeof REQUEST_COLUMNS>;
  private readonly completionBefore: number[] = [];
  private readonly completionId: number[] = [];
  idCount = 0;

  /**
   * `capacity`: the expected number of requests (the columns grow past it). `shared`: the columns in
   * shared memory, for a stream posted to other threads (worker/shared-stream.ts).
   */
  constructor(
    capacity = 1024,
    private readonly shared = false,
  ) {
    this.c = makeColumns(REQUEST_COLUMNS, Math.max(16, capacity), shared);
  }

  get length(): number {
    return this.n;
  }

  newId(): number {
    return this.idCount++;
  }

  alloc(id: number, size: number, stream: number, source = -1, input = -1, pool = 0): void {
    this.push(RequestKind.alloc, id, size, stream, source, input, pool);
  }

  /** `deferred`: the block stays pending until a completion (see RequestKind.freeDeferred). */
  free(id: number, size: number, stream: number, source = -1, deferred = false): void {
    this.push(deferred ? RequestKind.freeDeferred : RequestKind.free, id, size, stream, source, -1, 0);
  }

  /** The deferred free of `id` completes at the start of the next request. */
  complete(id: number): void {
    this.completionBefore.push(this.n);
    this.completionId.push(id);
  }



  finish(extra: Partial<Omit<RequestStream, keyof typeof REQUEST_COLUMNS | 'length' | 'idCount' | 'completions'>> = {}): RequestStream {
    return {
      length: this.n,
      ...trimColumns(this.c, REQUEST_COLUMNS, this.n, this.shared),
      pools: extra.pools ?? [DEFAULT_POOL],
      completions: { before: Int32Array.from(this.completionBefore), id: Int32Array.from(this.completionId) },
      recordedEmptyCache: extra.recordedEmptyCache ?? new Int32Array(0),
      recordedEmptyCachePool: extra.recordedEmptyCachePool ?? new Int32Array(extra.recordedEmptyCache?.length ?? 0),
      releasedPools: extra.releasedPools ?? { after: new Int32Array(0), pool: new Int32Array(0) },
      idCount: this.idCount,
      failedInRecording: extra.failedInRecording ?? new Set(),
      recordedOoms: extra.recordedOoms ?? new Int32Array(0),
      cudnnWorkspaces: extra.cudnnWorkspaces ?? new Set(),
      ...(extra.recordedCap ? { recordedCap: extra.recordedCap } : {}),
      initialSegments: extra.initialSegments ?? [],
      initialBlocks: extra.initialBlocks ?? [],
      recordedSegments: extra.recordedSegments ?? [],
      recordedMappings: extra.recordedMappings ?? [],
      notes: extra.notes ?? [],
      stepStarts: extra.stepStarts ?? new Int32Array(0),
    };
  }

  private push(kind: RequestKind, id: number, size: number, stream: number, source: number, input: number, pool: number): void {
    let c = this.c;
    if (this.n === c.kind.length) {
      growColumns(c, REQUEST_COLUMNS, c.kind.length * 2, this.shared);
      c = this.c;
    }
    const i = this.n++;
    c.kind[i] = kind;
    c.id[i] = id;
    c.size[i] = size;
    // Zeros are not written: the columns start zeroed, and memory never written is never paged in
    // (most streams are on stream 0 and the default pool).
    if (stream !== 0) c.stream[i] = stream;
    c.source[i] = source;
    c.input[i] = input;
    if (pool !== 0) c.pool[i] = pool;
  }
}
