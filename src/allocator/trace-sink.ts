/** What the allocator did, in PyTorch's TraceEntry actions (device_traces). */
export const enum Action {
  alloc = 0,
  free_requested = 1,
  free_completed = 2,
  segment_alloc = 3,
  segment_free = 4,
  segment_map = 5,
  segment_unmap = 6,
  oom = 7,
}

export const ACTION_NAMES = [
  'alloc',
  'free_requested',
  'free_completed',
  'segment_alloc',
  'segment_free',
  'segment_map',
  'segment_unmap',
  'oom',
] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/**
 * Receives every trace event the allocator records, as record_trace() does.
 * For `oom`, addr is the device's free memory (PyTorch stores device_free there).
 * `tag` is the request id of the block concerned, or -1 for segment events.
 */
export interface TraceSink {
  record(action: Action, addr: number, size: number, stream: number, tag: number): void;
}
