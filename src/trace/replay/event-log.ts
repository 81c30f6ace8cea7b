// The allocator's trace events in columns: a 900k-event replay makes no per-event objects.
import { ACTION_NAMES, Action } from '../../allocator/trace-action';
import type { TraceSink } from '../../allocator/trace-sink';
import { growColumns, makeColumns } from '../../lib/columns';
import type { TraceEntry } from '../snapshot/snapshot';

const EVENT_COLUMNS = { action: Uint8Array, addr: Float64Array, size: Float64Array, stream: Float64Array, request: Int32Array } as const;

export class EventLog implements TraceSink {
  length = 0;
  declare action: Uint8Array;
  declare addr: Float64Array;
  declare size: Float64Array;
  declare stream: Float64Array;
  /** Index of the source request being served when the event happened. */
  declare request: Int32Array;
  /** Set by the replay before each request. */
  currentRequest = -1;
  /** Only `length` is kept (a replay for its stats alone): the columns stay empty. */
  readonly countOnly: boolean;

  /** `capacity`: expected number of events (a request stream makes about 1.5 per request). */
  constructor(capacity = 1024, { countOnly = false } = {}) {
    this.countOnly = countOnly;
    Object.assign(this, makeColumns(EVENT_COLUMNS, countOnly ? 0 : Math.max(16, capacity)));
  }

  // The block's request id (the sink's last argument) is not kept: the request column says which
  // request each event served, and nothing reads the id.
  record(action: Action, addr: number, size: number, stream: number): void {
    if (this.countOnly) {
      this.length++;
      return;
    }
    if (this.length === this.action.length) this.grow();
    const i = this.length++;
    this.action[i] = action;
    this.addr[i] = addr;
    this.size[i] = size;
    // The column starts zeroed: traces on the default stream never write (nor page in) its memory.
    if (stream !== 0) this.stream[i] = stream;
    this.request[i] = this.currentRequest;
  }

  /** Drops every event recorded so far. */
  clear(): void {
    this.length = 0;
  }

  /** Event i as PyTorch writes it in device_traces (oom: device_free instead of addr). */
  entry(i: number): TraceEntry {
    const action = ACTION_NAMES[this.action[i]!]!;
    if (action === 'oom') {
      return { action, addr: 0, size: this.size[i]!, stream: this.stream[i]!, device_free: this.addr[i]! };
    }
    return { action, addr: this.addr[i]!, size: this.size[i]!, stream: this.stream[i]! };
  }

  private grow(): void {
    growColumns(this, EVENT_COLUMNS, this.action.length * 2);
  }
}
