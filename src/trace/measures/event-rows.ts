// The recording's trace entries as rows for an event list (memory_viz's Allocator State History), and
// which request each entry belongs to, so that a row moves the cursor and the cursor finds its row.
import { ACTION_NAMES } from '../../allocator/trace-action';
import type { TraceColumns } from '../snapshot/trace-columns';
import type { RequestStream } from '../stream/request-stream';

export interface EventRow {
  entry: number;
  action: string;
  /** For an oom, device_free (PyTorch's TraceEntry keeps it in addr). */
  addr: number;
  size: number;
  stream: number;
  /** time_us, NaN where the trace has none ... */
  time: number;
  /** ... and µs since the trace's first entry with a time. */
  since: number;
  /** The request this entry belongs to (the last one made from it or before it), -1 before the first. */
  request: number;
  compileContext?: string;
  userMetadata?: string;
}

/** For each entry, the last request made from it or from an entry before it (-1: none yet). */
export function requestOfEntries(stream: RequestStream, entries: number): Int32Array {
  const out = new Int32Array(entries).fill(-1);
  for (let i = 0; i < stream.length; i++) {
    const e = stream.source[i]!;
    if (e >= 0 && e < entries) out[e] = i;
  }
  for (let e = 1; e < entries; e++) if (out[e]! < out[e - 1]!) out[e] = out[e - 1]!;
  return out;
}

/** The first time in the trace (NaN if none), found once per trace: a list asks for rows page by page. */
const firstTimes = new WeakMap<TraceColumns, number>();
function firstTime(trace: TraceColumns): number {
  let t0 = firstTimes.get(trace);
  if (t0 === undefined) {
    t0 = NaN;
    const d = trace.details;
    for (let e = 0; d && e < trace.length && Number.isNaN(t0); e++) t0 = d.time[e]!;
    firstTimes.set(trace, t0);
  }
  return t0;
}

/** Rows [start, start + count) of `trace`, clamped to it. */
export function eventRows(trace: TraceColumns, requestOf: Int32Array, start: number, count: number): EventRow[] {
  const rows: EventRow[] = [];
  const end = Math.min(trace.length, start + count);
  const d = trace.details;
  const t0 = firstTime(trace);
  for (let e = Math.max(0, start); e < end; e++) {
    const context = d?.context.get(e);
    rows.push({
      entry: e,
      action: ACTION_NAMES[trace.action[e]!] ?? 'unknown',
      addr: trace.addr[e]!,
      size: trace.size[e]!,
      stream: trace.stream[e]!,
      time: d ? d.time[e]! : NaN,
      since: d ? d.time[e]! - t0 : NaN,
      request: requestOf[e]!,
      ...(context?.compile_context ? { compileContext: context.compile_context } : {}),
      ...(context?.user_metadata ? { userMetadata: context.user_metadata } : {}),
    });
  }
  return rows;
}
