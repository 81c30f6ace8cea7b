// The allocator's trace events in columns: a 900k-event replay makes no per-event objects.
import { ACTION_NAMES, Action } from '../../allocator/trace-action';
import type { TraceSink } from '../../allocator/trace-sink';
import { growTyped } from '../../lib/grow-typed';
import type { TraceEntry } from '../snapshot/snapshot';

export class EventLog implements TraceSink {
  length = 0;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  /** Index of the source request being served when the event happened. */
  request: Int32Array;
  /** Set by the replay before each request. */
  currentRequest = -1;
  /** Only `length` is kept (a replay for its stats alone): the columns stay empty. */
  readonly countOnly: boolean;

  /** `capacity`: expected number of events (a request stream makes about 1.5 per request). */
  constructor(capacity = 1024, { countOnly = false } = {}) {
    this.countOnly = countOnly;
    const n = countOnly ? 0 : Math.max(16, capacity);
    this.action = new Uint8Array(n);
    this.addr = new Float64Array(n);
    this.size = new Float64Array(n);
    this.stream = new Float64Array(n);
    this.request = new Int32Array(n);
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

  /** Event i as PyTorch writes it in device_traces (oom: device_free instead of addr). */
  entry(i: number): TraceEntry {
    const action = ACTION_NAMES[this.action[i]!]!;
    if (action === 'oom') {
      return { action, addr: 0, size: this.size[i]!, stream: this.stream[i]!, device_free: this.addr[i]! };
    }
    return { action, addr: this.addr[i]!, size: this.size[i]!, stream: this.stream[i]! };
  }

  private grow(): void {
    const n = this.action.length * 2;
    this.action = growTyped(this.action, n);
    this.addr = growTyped(this.addr, n);
    this.size = growTyped(this.size, n);
    this.stream = growTyped(this.stream, n);
    this.request = growTyped(this.request, n);
  }
}
