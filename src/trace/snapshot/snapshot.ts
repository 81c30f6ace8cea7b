// The shape of torch.cuda.memory._dump_snapshot() output (PyTorch 2.x), as splitscope uses it.
// Field names are PyTorch's own so that files round-trip through pytorch.org/memory_viz.

export interface Frame {
  name: string;
  filename: string;
  line: number;
}

export type TraceAction =
  | 'alloc'
  | 'free_requested'
  | 'free_completed'
  | 'segment_alloc'
  | 'segment_free'
  | 'segment_map'
  | 'segment_unmap'
  | 'oom'
  | 'snapshot'
  /** A user-defined marker (TraceEntry::USER_DEFINED in PyTorch); not an allocator event. */
  | 'user_defined';

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
}

export type BlockState = 'active_allocated' | 'active_pending_free' | 'inactive';

export interface SnapshotBlock {
  address: number;
  size: number;
  requested_size: number;
  state: BlockState;
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
}
