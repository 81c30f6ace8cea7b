// A device trace reduced to what a replay reads (action as an Action code, addr, size, stream), one typed column
// each: a 900k-entry trace is then four arrays instead of 900k objects for the GC to carry.
import { growTyped } from '../../lib/grow-typed';
import { actionCode } from '../../allocator/trace-action';
import type { TraceEntry } from './snapshot';

export interface TraceColumns {
  length: number;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
}

/** Appends entries to growable columns. */
export class TraceColumnsBuilder implements TraceColumns {
  length = 0;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;

  constructor(capacity = 1024) {
    const n = Math.max(16, capacity);
    this.action = new Uint8Array(n);
    this.addr = new Float64Array(n);
    this.size = new Float64Array(n);
    this.stream = new Float64Array(n);
  }

  push(code: number, addr: number, size: number, stream: number): void {
    if (this.length === this.action.length) this.grow();
    const i = this.length++;
    this.action[i] = code;
    this.addr[i] = addr;
    this.size[i] = size;
    this.stream[i] = stream;
  }

  /** Appends rows [start, start + count) of `from`. */
  pushRows(from: TraceColumns, start: number, count: number): void {
    while (this.length + count > this.action.length) this.grow();
    const end = start + count;
    this.action.set(from.action.subarray(start, end), this.length);
    this.addr.set(from.addr.subarray(start, end), this.length);
    this.size.set(from.size.subarray(start, end), this.length);
    this.stream.set(from.stream.subarray(start, end), this.length);
    this.length += count;
  }

  private grow(): void {
    const n = this.action.length * 2;
    this.action = growTyped(this.action, n);
    this.addr = growTyped(this.addr, n);
    this.size = growTyped(this.size, n);
    this.stream = growTyped(this.stream, n);
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
  };
}

/** Columns of checked trace entries (decodeSnapshotFile's output). */
export function traceColumnsFromEntries(entries: readonly TraceEntry[]): TraceColumns {
  const columns = new TraceColumnsBuilder(entries.length);
  for (const e of entries) columns.push(actionCode(e.action), e.addr, e.size, e.stream);
  return columns;
}
