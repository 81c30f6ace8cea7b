// The allocator's trace events in columns: a 900k-event replay makes no per-event objects.
import { ACTION_NAMES, Action, type TraceSink } from '../allocator/trace-sink';
import type { TraceEntry } from './snapshot';

export class EventLog implements TraceSink {
  length = 0;
  action: Uint8Array;
  addr: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  /** Request id of the block concerned, -1 for segment and oom events. */
  tag: Int32Array;
  /** Index of the source request being served when the event happened. */
  request: Int32Array;
  /** Set by the replay before each request. */
  currentRequest = -1;

  /** `capacity`: expected number of events (a request stream makes about 1.5 per request). */
  constructor(capacity = 1024) {
    const n = Math.max(16, capacity);
    this.action = new Uint8Array(n);
    this.addr = new Float64Array(n);
    this.size = new Float64Array(n);
    this.stream = new Float64Array(n);
    this.tag = new Int32Array(n);
    this.request = new Int32Array(n);
  }

  record(action: Action, addr: number, size: number, stream: number, tag: number): void {
    if (this.length === this.action.length) this.grow();
    const i = this.length++;
    this.action[i] = action;
    this.addr[i] = addr;
    this.size[i] = size;
    this.stream[i] = stream;
    this.tag[i] = tag;
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
    const grown = <T extends Uint8Array | Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.action = grown(this.action, (k) => new Uint8Array(k));
    this.addr = grown(this.addr, (k) => new Float64Array(k));
    this.size = grown(this.size, (k) => new Float64Array(k));
    this.stream = grown(this.stream, (k) => new Float64Array(k));
    this.tag = grown(this.tag, (k) => new Int32Array(k));
    this.request = grown(this.request, (k) => new Int32Array(k));
  }
}
