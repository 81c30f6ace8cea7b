// A device trace reduced to what a replay reads (action as an Action code, addr, size, stream), one typed column
// each: a 900k-entry trace is then four arrays instead of 900k objects for the GC to carry. With details, also
// what a view shows of an entry: its time and its stack frames (an index into the trace's distinct frame lists,
// which torch shares between entries, so that a million entries hold a few thousand lists).
import { growColumns, makeColumns } from '../../lib/columns';
import { Action, actionCode } from '../../allocator/trace-action';
import type { Frame, TraceEntry } from './snapshot';

/** A device trace in columns. For an oom, `addr` holds device_free, as PyTorch's TraceEntry keeps it. */
export interface TraceColumns {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  /** What the entry's stack frames say (FROM_EMPTY_CACHE, CUDNN_WORKSPACE), where they are recorded. */
  flags: Uint8Array;
  /**
   * Where the trace records pools (PyTorch 2.12's pool_id on every entry): the private pools' entries,
   * by trace index; the others are the default pools'. Absent for older traces.
   */
  recordedPools?: Map<number, readonly [number, number]>;
  /** Times and stack frames, when asked for (the page's views; a replay needs neither). */
  details?: TraceDetails;
}

export interface TraceDetails {
  /** time_us of each entry (NaN where it has none). */
  time: Float64Array;
  /** Index of each entry's frame list in `frameLists`, -1 where it has none. */
  frames: Int32Array;
  frameLists: Frame[][];
  /** The entries with a compile_context or user_metadata that is not empty, by index (most have none). */
  context: Map<number, EntryContext>;
}

/** What a program attached to an entry: torch.compile's context, or torch.cuda.memory._set_allocator_metadata's. */
export interface EntryContext {
  compile_context?: string;
  user_metadata?: string;
}

/** A segment_free or segment_unmap that torch.cuda.empty_cache() made (its stack says so). */
export const FROM_EMPTY_CACHE = 1;
/**
 * An alloc or oom of a cuDNN convolution's workspace: its C++ stack has run_conv_plan (PyTorch's cuDNN v8
 * path, aten/src/ATen/native/cudnn/Conv_v8.cpp), which catches the OutOfMemoryError and tries the next
 * engine config, so the program goes on. A trace recorded with Python stacks alone cannot say.
 */
export const CUDNN_WORKSPACE = 2;

/**
 * A segment_free a torch.cuda.MemPool going away made (its C++ stack has at::cuda::MemPool::~MemPool,
 * which empties that pool's cache): every segment of the run is that one pool's. A trace recorded with
 * Python stacks alone cannot say.
 */
export const POOL_RELEASE = 4;

const RUN_CONV_PLAN = 'at::native::run_conv_plan(';
const MEMPOOL_GONE = 'at::cuda::MemPool::~MemPool(';

/** The flag bits one stack frame's name stands for (a frame list's marks are its frames' together). */
export function frameMarks(name: string): number {
  if (name === 'empty_cache') return FROM_EMPTY_CACHE;
  if (name.charCodeAt(0) === 97 && name.startsWith(MEMPOOL_GONE)) return POOL_RELEASE;
  // 'r' at 12 first: most C++ frames fail there without a comparison of the whole prefix.
  return name.length > RUN_CONV_PLAN.length && name.charCodeAt(12) === 114 && name.startsWith(RUN_CONV_PLAN) ? CUDNN_WORKSPACE : 0;
}

/** An entry's flags from its frame list's marks: what each mark means for that kind of entry. */
export function entryFlags(code: number, marks: number): number {
  if (code === Action.segment_free || code === Action.segment_unmap) return marks & (FROM_EMPTY_CACHE | POOL_RELEASE);
  return code === Action.alloc || code === Action.oom ? marks & CUDNN_WORKSPACE : 0;
}

const TRACE_COLUMNS = { action: Uint8Array, addr: Float64Array, size: Float64Array, stream: Float64Array, flags: Uint8Array } as const;
const DETAIL_COLUMNS = { time: Float64Array, frames: Int32Array } as const;

/** Appends entries to growable columns (with `details`, their times and frames too). */
export class TraceColumnsBuilder implements TraceColumns {
  length = 0;
  declare action: Uint8Array;
  declare addr: Float64Array;
  declare size: Float64Array;
  declare stream: Float64Array;
  declare flags: Uint8Array;
  recordedPools?: Map<number, readonly [number, number]>;
  details?: TraceDetails;
  /** Frame lists by content: torch writes a new list per entry but shares its frames, so a list
   * is known by its frames' ids (hash -> indices in details.frameLists, with their ids). */
  private readonly listsByHash = new Map<number, number[]>();
  private readonly listIds: Int32Array[] = [];
  /** Ids of frame objects, for lists given as objects alone (frameListIndex). */
  private readonly frameIds = new Map<Frame, number>();
  /** Long frame lists already seen, by identity: their index and marks. A file may share one list
   * among all its entries (a pickle's memo); the work is then per list, not per entry. */
  private readonly longLists = new Map<readonly Frame[], { index: number; marks: number }>();

  constructor(capacity = 1024, details = false) {
    const rows = Math.max(16, capacity);
    Object.assign(this, makeColumns(TRACE_COLUMNS, rows));
    if (details) this.details = { ...makeColumns(DETAIL_COLUMNS, rows), frameLists: [], context: new Map() };
  }

  push(code: number, addr: number, size: number, stream: number, flags = 0): void {
    if (this.length === this.action.length) this.grow();
    const i = this.length++;
    this.action[i] = code;
    this.addr[i] = addr;
    this.size[i] = size;
    // These columns start zeroed, and most traces are on the default stream (0) with no flags: a zero
    // is not written, so that their memory is never paged in (a 1 GB snapshot's: 100 MB).
    if (stream !== 0) this.stream[i] = stream;
    if (flags !== 0) this.flags[i] = flags;
  }

  /** The details of the row just pushed (with details only): its time, its frame list's index or -1, its context. */
  pushDetails(time: number, frameList: number, compileContext = '', userMetadata = ''): void {
    const d = this.details!;
    const i = this.length - 1;
    d.time[i] = time;
    d.frames[i] = frameList;
    // PyTorch writes "N/A" for no compile context.
    const compile = compileContext !== '' && compileContext !== 'N/A';
    if (compile || userMetadata !== '') {
      d.context.set(i, { ...(compile ? { compile_context: compileContext } : {}), ...(userMetadata !== '' ? { user_metadata: userMetadata } : {}) });
    }
  }

  /**
   * The index in details.frameLists of the list of these frames, whose ids (any numbers that tell
   * frames apart: the pickle's memo slots) are `ids`; added (a copy of `frames`) at its first sight.
   */
  internFrames(frames: readonly Frame[], ids: ArrayLike<number>, n = ids.length): number {
    let h = n;
    for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + ids[i]!) | 0;
    let bucket = this.listsByHash.get(h);
    if (bucket) {
      for (const k of bucket) if (sameIds(this.listIds[k]!, ids, n)) return k;
    } else this.listsByHash.set(h, (bucket = []));
    const k = this.details!.frameLists.push(frames.slice(0, n)) - 1;
    const copy = new Int32Array(n);
    for (let i = 0; i < n; i++) copy[i] = ids[i]!;
    this.listIds.push(copy);
    bucket.push(k);
    return k;
  }

  /** internFrames for a list of frame objects alone: frames are told apart by identity (negative
   * ids, apart from memo slots). */
  frameListIndex(frames: Frame[]): number {
    return this.longList(frames)?.index ?? this.frameListIndexOf(frames);
  }

  /** A long list's index and marks, from its first sight on (null for a short list: cheaper done again). */
  private longList(frames: Frame[]): { index: number; marks: number } | null {
    if (frames.length <= LONG_LIST) return null;
    let known = this.longLists.get(frames);
    if (!known) {
      let marks = 0;
      for (const f of frames) marks |= frameMarks(f.name);
      this.longLists.set(frames, (known = { index: this.details ? this.frameListIndexOf(frames) : -1, marks }));
    }
    return known;
  }

  private frameListIndexOf(frames: Frame[]): number {
    const ids = frames.map((f) => {
      let id = this.frameIds.get(f);
      if (id === undefined) this.frameIds.set(f, (id = -1 - this.frameIds.size));
      return id;
    });
    return this.internFrames(frames, ids);
  }

  /** Appends a checked entry (an oom's device_free goes in addr). */
  pushEntry(e: TraceEntry): void {
    const code = actionCode(e.action);
    const long = e.frames ? this.longList(e.frames) : null;
    let marks = long?.marks ?? 0;
    if (!long) for (const f of e.frames ?? []) marks |= frameMarks(f.name);
    const flags = entryFlags(code, marks);
    const pool = e.pool_id;
    if (pool) {
      this.recordedPools ??= new Map();
      if (pool[0] !== 0 || pool[1] !== 0) this.recordedPools.set(this.length, pool);
    }
    this.push(code, e.action === 'oom' ? (e.device_free ?? 0) : e.addr, e.size, e.stream, flags);
    if (this.details) this.pushDetails(e.time_us ?? NaN, e.frames ? (long?.index ?? this.frameListIndex(e.frames)) : -1, e.compile_context ?? '', e.user_metadata ?? '');
  }

  /** Appends rows [start, start + count) of `from` (with the same details setting). */
  pushRows(from: TraceColumns, start: number, count: number): void {
    while (this.length + count > this.action.length) this.grow();
    const end = start + count;
    this.action.set(from.action.subarray(start, end), this.length);
    this.addr.set(from.addr.subarray(start, end), this.length);
    this.size.set(from.size.subarray(start, end), this.length);
    this.stream.set(from.stream.subarray(start, end), this.length);
    this.flags.set(from.flags.subarray(start, end), this.length);
    if (from.recordedPools) {
      this.recordedPools ??= new Map();
      for (const [i, pool] of from.recordedPools) if (i >= start && i < end) this.recordedPools.set(i - start + this.length, pool);
    }
    const d = this.details;
    const f = from.details;
    if (d && f) {
      d.time.set(f.time.subarray(start, end), this.length);
      for (let i = start; i < end; i++) {
        const k = f.frames[i]!;
        d.frames[i - start + this.length] = k < 0 ? -1 : this.frameListIndex(f.frameLists[k]!);
      }
      for (const [i, c] of f.context) if (i >= start && i < end) d.context.set(i - start + this.length, c);
    }
    this.length += count;
  }

  private grow(): void {
    const rows = this.action.length * 2;
    growColumns(this, TRACE_COLUMNS, rows);
    if (this.details) growColumns(this.details, DETAIL_COLUMNS, rows);
  }
}

/** Frame lists longer than this are known by identity once seen (snapshot-checks.ts checks them once too). */
const LONG_LIST = 32;

/** Whether `a` holds the first `n` of `b`. */
function sameIds(a: Int32Array, b: ArrayLike<number>, n: number): boolean {
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Rows [start, end) as views, no copy. */
export function sliceColumns(c: TraceColumns, start: number, end: number): TraceColumns {
  const d = c.details;
  return {
    length: end - start,
    action: c.action.subarray(start, end),
    addr: c.addr.subarray(start, end),
    size: c.size.subarray(start, end),
    stream: c.stream.subarray(start, end),
    flags: c.flags.subarray(start, end),
    ...(c.recordedPools ? { recordedPools: new Map([...c.recordedPools].filter(([i]) => i >= start && i < end).map(([i, p]) => [i - start, p])) } : {}),
    ...(d
      ? {
          details: {
            time: d.time.subarray(start, end),
            frames: d.frames.subarray(start, end),
            frameLists: d.frameLists,
            context: new Map([...d.context].filter(([i]) => i >= start && i < end).map(([i, c]) => [i - start, c])),
          },
        }
      : {}),
  };
}

/** Columns of checked trace entries (decodeSnapshotFile's output). */
export function traceColumnsFromEntries(entries: readonly TraceEntry[], details = false): TraceColumns {
  const columns = new TraceColumnsBuilder(entries.length, details);
  for (const e of entries) columns.pushEntry(e);
  return columns;
}
