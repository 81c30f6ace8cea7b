// Messages between the page and the replay worker.
import type { ReplayOom } from '../trace/replay';

export type ToWorker =
  | { type: 'open'; name: string; bytes: ArrayBuffer }
  | { type: 'replay'; conf: string | null; capacityBytes: number | null };

export interface ReplaySummary {
  source: string;
  conf: string;
  recordedConf: string;
  addresses: 'recorded' | 'simulated';
  requests: number;
  events: number;
  stats: Record<string, number>;
  ooms: ReplayOom[];
  notes: string[];
}

export type FromWorker =
  | { type: 'progress'; fraction: number }
  | { type: 'opened'; name: string }
  | { type: 'result'; summary: ReplaySummary }
  | { type: 'error'; message: string };
