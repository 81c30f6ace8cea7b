// A device trace reduced to what a replay reads (action as an Action code, addr, size, stream), one typed column
// each: a 900k-entry trace is then four arrays instead of 900k objects for the GC to carry.
import { growColumns, makeColumns } from '../../lib/columns';
import { actionCode } from '../../allocator/trace-action';
import type { TraceEntry } from './snapshot';

/** A device trace in columns. For an oom, `addr` holds device_free, as PyTorch's TraceEntry keeps it. */
export interface TraceColumns {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  /** What the entry's stack frames say (FROM_EMPTY_CACHE), where they are recorded. */
  flags: Uint8Array;
  /**
   * Where the trace records pools (PyTorch 2.12's pool_id on every entry): the private pools' entries,
   * by trace index; the others are the default pools'. Absent for older traces.
   */
  recordedPools?: Map<number, readonly [number, number]>;
}

/** A segment_free or segment_unmap that torch.cuda.empty_cache() made (its stack says so). */
export const FROM_EMPTY_CACHE = 1;

const TRACE_COLUMNS = { action: Uint8Array, addr: Float64Array, size: Float64Array, stream: Float64Array, flags: Uint8Array } as const;

/** Appends entries to growable columns. */
export class TraceColumnsBuilder implements TraceColumns {
  length = 0;
  declare action: Uint8Array;
  declare addr: Float64Array;
  declare size: Float64Array;
  declare stream: Float64Array;
  declare flags: Uint8Array;
  recordedPools?: Map<number, readonly [number, number]>;

  constructor(capacity = 1024) {
    Object.assign(this, makeColumns(TRACE_COLUMNS, Math.max(16, capacity)));
  }

  push(code: number, addr: number, size: number, stream: number, flags = 0): void {
    if (this.length === this.action.length) this.grow();
    const i = this.length++;
    this.action[i] = code;
    this.addr[i] = addr;
    this.size[i] = size;
    this.stream[i] = stream;
    // The column starts zeroed: most rows never write (nor page in) its memory.
    if (flags !== 0) this.flags[i] = flags;
  }

  /** Appends a checked entry (an oom's device_free goes in addr). */
  pushEntry(e: TraceEntry): void {
    const released = e.action === 'segment_free' || e.action === 'segment_unmap';
    const flags = released && e.frames?.some((f) => f.name === 'empty_cache') ? FROM_EMPTY_CACHE : 0;
    const pool = e.pool_id;
    if (pool) {
      this.recordedPools ??= new Map();
      if (pool[0] !== 0 || pool[1] !== 0) this.recordedPools.set(this.length, pool);
    }
    this.push(actionCode(e.action), e.action === 'oom' ? (e.device_free ?? 0) : e.addr, e.size, e.stream, flags);
  }

  /** Appends rows [start, start + count) of `from`. */
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
    this.length += count;
  }

  private grow(): void {
    growColumns(this, TRACE_COLUMNS, this.action.length * 2);
  }
}

/** Rows [start, end) as views, no copy. */
export function sliceColumns(c: TraceColumns, start: number, end: number): TraceColumns {
  return {
    length: end - start,
    action: c.action.subarray(start, end),
    addr: c.addr.subarray(start, end),
    size: c.size.subarray(start, end),
    stream: c.stream.subarray(start, end),
    flags: c.flags.subarray(start, end),
    ...(c.recordedPools ? { recordedPools: new Map([...c.recordedPools].filter(([i]) => i >= start && i < end).map(([i, p]) => [i - start, p])) } : {}),
  };
}

/** Columns of checked trace entries (decodeSnapshotFile's output). */
export function traceColumnsFromEntries(entries: readonly TraceEntry[]): TraceColumns {
  const columns = new TraceColumnsBuilder(entries.length);
  for (const e of entries) columns.pushEntry(e);
  return columns;
}
