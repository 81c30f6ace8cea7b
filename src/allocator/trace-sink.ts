import type { Action } from './trace-action';

/**
 * Receives every trace event the allocator records, as record_trace() does.
 * For `oom`, addr is the device's free memory (PyTorch stores device_free there).
 * `tag` is the request id of the block concerned, or -1 for segment events.
 */
export interface TraceSink {
  record(action: Action, addr: number, size: number, stream: number, tag: number): void;
}
