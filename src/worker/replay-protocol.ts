// Messages between the page and the replay worker.
import type { Fragmentation } from '../trace/measures/fragmentation';
import type { MemoryLayout } from '../trace/measures/memory-layout';
import type { ReplayOom } from '../trace/replay/replay';
import type { RequestStream } from '../trace/stream/request-stream';

/** What a replay runs under; null fields take the source's own (recorded config, no cap). */
export interface ReplaySettings {
  conf: string | null;
  capacityBytes: number | null;
  /** The device whose trace replays (a snapshot of several GPUs); default 0. */
  device?: number;
  /** Request indices after which the run calls torch.cuda.empty_cache() ... */
  emptyCacheAfter?: number[];
  /** ... and torch.cuda.reset_peak_memory_stats(). */
  resetPeakAfter?: number[];
}

export type ToWorker =
  | { type: 'open'; name: string; bytes: ArrayBuffer }
  /** A built-in workload becomes the source. */
  | { type: 'workload'; id: string; params: Record<string, number> }
  /** Replays the source; the cursor rests on `cursor` (null: the last request). */
  | { type: 'replay'; settings: ReplaySettings; cursor: number | null }
  /** The state after request `cursor` under the last replay's settings. */
  | { type: 'seek'; cursor: number }
  /** The stack frames of an allocation (the block's logical id), when the trace has them. */
  | { type: 'frames'; id: number }
  /** The source's request stream, for a GPU stress run on the page. */
  | { type: 'stream' }
  /** The last replay as a PyTorch snapshot file (opens in pytorch.org/memory_viz). */
  | { type: 'export'; format: 'pickle' | 'json' }
  /** Replays the source under each config (the rest of `base` for all), with the state after `cursor`. */
  | { type: 'compare'; confs: string[]; base: ReplaySettings; cursor: number }
  /** The state after request `cursor` under each config of the last comparison. */
  | { type: 'compareSeek'; cursor: number };

export interface ReplaySummary {
  source: string;
  /** 'snapshot' for an imported or sample file, else the workload's id. */
  sourceKind: 'snapshot' | 'workload';
  conf: string;
  recordedConf: string;
  capacityBytes: number | null;
  addresses: 'recorded' | 'simulated';
  requests: number;
  events: number;
  /** The device replayed, and every device the snapshot has a trace or segments for (workloads: [0]). */
  device: number;
  devices: number[];
  /** Generated workloads: the request index at which each step begins (empty for traces). */
  stepStarts: number[];
  /** memory_stats() after the last request. */
  stats: Record<string, number>;
  ooms: ReplayOom[];
  notes: string[];
  peakReserved: number;
}

/** Per-request series of a whole replay, for the timeline. */
export interface ReplayTimeline {
  allocated: Float64Array;
  reserved: Float64Array;
  active: Float64Array;
  ooms: Int32Array;
  retries: Int32Array;
}

/** The state after request `cursor`. */
export interface CursorView {
  cursor: number;
  stats: Record<string, number>;
  fragmentation: Fragmentation;
  layout: MemoryLayout;
  /** The OOM message of a request at the cursor that failed, if it did ... */
  oom: string | null;
  /** ... and why it failed, in words. */
  oomWhy: string[];
}

/** One config of a comparison: its replay in brief, its timeline and the state at the cursor. */
export interface CompareRun {
  /** The config as replayed, written back as a PYTORCH_CUDA_ALLOC_CONF string. */
  conf: string;
  /** memory_stats() after the last request. */
  stats: Record<string, number>;
  peakReserved: number;
  timeline: ReplayTimeline;
  view: CursorView;
}

export type FromWorker =
  | { type: 'progress'; fraction: number }
  | { type: 'opened'; name: string }
  | { type: 'result'; summary: ReplaySummary; timeline: ReplayTimeline; view: CursorView }
  | { type: 'cursor'; view: CursorView }
  | { type: 'frames'; id: number; frames: string[] }
  | { type: 'stream'; stream: RequestStream }
  | { type: 'export'; bytes: Uint8Array<ArrayBuffer>; format: 'pickle' | 'json' }
  | { type: 'compared'; runs: CompareRun[] }
  | { type: 'compareCursor'; views: CursorView[] }
  /** `stream` / `export` / `compare`: the error answers such a request. */
  | { type: 'error'; message: string; stream?: boolean; export?: boolean; compare?: boolean };
