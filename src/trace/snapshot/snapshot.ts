// The shape of torch.cuda.memory._dump_snapshot() output (PyTorch 2.x), as splitscope uses it.
// Field names are PyTorch's own so that files round-trip through pytorch.org/memory_viz.
import { ACTION_NAMES, type ActionName } from '../../allocator/trace-action';

export interface Frame {
  name: string;
  filename: string;
  /** UNKNOWN_LINE where PyTorch did not know it. */
  line: number;
}

/** A frame's line when PyTorch does not know it (it writes 2^64 - 1, as torch.compile's frames do). */
export const UNKNOWN_LINE = -1;

/** Trace entry actions (allocator/trace-action.ts). */
export type TraceAction = ActionName;

export interface TraceEntry {
  action: TraceAction;
  /** PyTorch writes no addr on 'oom' entries; decodeSnapshotFile sets 0 there. */
  addr: number;
  size: number;
  stream: number;
  time_us?: number;
  /** Only on 'oom': bytes free on the device as cudaMemGetInfo reported. */
  device_free?: number;
  frames?: Frame[];
  compile_context?: string;
  user_metadata?: string;
  /** PyTorch 2.12+: the pool the entry's block or segment is in ((0, 0): the default pools). */
  pool_id?: [number, number];
}

/** A block's state in a snapshot file (the segment map's BlockState, trace/measures, is the view's). */
export type SnapshotBlockState = 'active_allocated' | 'active_pending_free' | 'inactive';

export interface SnapshotBlock {
  address: number;
  size: number;
  requested_size: number;
  state: SnapshotBlockState;
  frames?: Frame[];
}

export interface SnapshotSegment {
  device: number;
  address: number;
  total_size: number;
  allocated_size: number;
  active_size: number;
  requested_size: number;
  stream: number;
  segment_type: 'large' | 'small';
  segment_pool_id?: [number, number];
  is_expandable: boolean;
  frames?: Frame[];
  blocks: SnapshotBlock[];
}

/** allocator_settings as torch 2.11 writes it; older files may lack it or some keys. */
export interface AllocatorSettings {
  PYTORCH_CUDA_ALLOC_CONF?: string;
  max_split_size?: number;
  garbage_collection_threshold?: number;
  expandable_segments?: boolean;
  roundup_power2_divisions?: Record<string, number>;
  [key: string]: unknown;
}

export interface Snapshot {
  segments: SnapshotSegment[];
  /** One list per device index. */
  device_traces: TraceEntry[][];
  allocator_settings?: AllocatorSettings;
  external_annotations?: unknown[];
  /** splitscope's, not PyTorch's: what reading the file left out or could not read, in words. */
  notes?: string[];
}

/**
 * The words of a snapshot file (its dict keys, actions, states), which the pickle reader decodes to
 * one string each: the checks and the trace-row fast path then compare them by pointer.
 */
export const SNAPSHOT_WORDS: readonly string[] = [
  'action', 'addr', 'size', 'stream', 'time_us', 'compile_context', 'user_metadata', 'frames',
  'device_free', 'name', 'filename', 'line', 'address', 'requested_size', 'state', 'device',
  'total_size', 'allocated_size', 'active_size', 'segment_type', 'segment_pool_id', 'pool_id',
  'is_expandable', 'blocks', 'active_allocated', 'active_pending_free', 'inactive', 'large', 'small',
  'segments', 'device_traces', 'allocator_settings', 'external_annotations', 'N/A', '',
  ...ACTION_NAMES,
];

/** No device holds more: a size past this (an allocation of 2^52 bytes) was never recorded by PyTorch,
 * and a file that has one is refused with the entry named (the largest GPUs hold a few hundred GB). */
export const MAX_RECORDABLE_BYTES = 2 ** 44;
