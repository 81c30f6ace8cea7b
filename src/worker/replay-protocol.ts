// What the replay worker answers (its calls are the methods of ReplayApi in replay-worker.ts).
import type { Capacity } from '../allocator/capacity';
import type { Fragmentation } from '../trace/measures/fragmentation';
import type { MemoryLayout } from '../trace/measures/memory-layout';
import type { ReplayOom } from '../trace/replay/replay';
import type { RecordedCap } from '../trace/stream/recorded-cap';
import type { Coverage } from '../trace/replay/coverage';
import type { ViewKey } from './replay-settings';

export interface ReplaySummary {
  /** What it was replayed for. */
  key: ViewKey;
  source: string;
  /** 'snapshot' for an imported or sample file, else the workload's id. */
  sourceKind: 'snapshot' | 'workload';
  conf: string;
  recordedConf: string;
  /** The cap the settings ask for (null: the source's own) ... */
  capacityBytes: number | null;
  /** ... and the one the replay ran under: asked for, a per_process_memory_fraction key's, or inferred. */
  capacity: Capacity | null;
  /** The cap a recording that ended in an OOM shows, when the replay used it. */
  inferredCap: RecordedCap | null;
  /** The recording's own torch.cuda.empty_cache() calls, after these request indices. */
  recordedEmptyCache: number[];
  addresses: 'recorded' | 'simulated';
  requests: number;
  events: number;
  /** Entries of the recording's trace for this device (the event list's rows; 0 for workloads). */
  recordedEvents: number;
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
  /** Peak reserved memory under the source's own config and cap: the max_split slider's top, which a config change does not move. */
  ownPeakReserved: number;
  /** How much of the program the recording covers (what a verdict may say). */
  coverage: Coverage;
  /** A predicted run: its size and how it was predicted. */
  prediction?: PredictionFacts;
}

/** How a predicted run was made (trace/predict/predict-stream.ts's Prediction, less the stream). */
export interface PredictionFacts {
  size: number;
  /** The recordings' sizes. */
  sizes: number[];
  skeleton: { name: string; size: number };
  aligned: { name: string; size: number; share: number }[];
  laws: { constant: number; linear: number; quadratic: number; unclean: number; unaligned: number };
  uncleanSites: { site: string; allocations: number }[];
  extrapolation: number | null;
  cudnnWorkspaces: number;
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
  /** What it was replayed for. */
  key: ViewKey;
  cursor: number;
  stats: Record<string, number>;
  fragmentation: Fragmentation;
  layout: MemoryLayout;
  /** The OOM message of a request at the cursor that failed, if it did ... */
  oom: string | null;
  /** ... and why it failed, in words. */
  oomWhy: string[];
  /** The recorded trace entry the cursor's request came from (-1: none, as for workloads). */
  entry: number;
}

/** One config of a comparison: its replay in brief, its timeline and the state at the cursor. */
export interface CompareRun {
  /** The config as replayed, written back as a PYTORCH_CUDA_ALLOC_CONF string. */
  conf: string;
  /** memory_stats() after the last request. */
  stats: Record<string, number>;
  /** The first failed request, null when none failed. */
  firstOom: number | null;
  peakReserved: number;
  timeline: ReplayTimeline;
  view: CursorView;
}

/** A predicted run at one size on the prediction chart. */
export interface CurvePoint {
  size: number;
  peakReserved: number;
  peakAllocated: number;
  /** The first OOM of the run shown (its segments where the driver model puts them), null: none. */
  firstOom: number | null;
  /** Whether it fits under most address layouts (trace/predict/address-layouts.ts), and whether they split. */
  fits: boolean;
  split: boolean;
  /** The prediction's error band on peak reserved, relative (trace/predict/prediction-band.ts): above the
   * predicted peak, and below it. */
  band: number;
  bandBelow: number;
}
