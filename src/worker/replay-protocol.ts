// Messages between the page and the replay worker.
import type { ReplayOom } from '../trace/replay';
import type { RequestStream } from '../trace/request-stream';

export type ToWorker =
  | { type: 'open'; name: string; bytes: ArrayBuffer }
  | { type: 'replay'; conf: string | null; capacityBytes: number | null }
  /** The open snapshot's request stream, for a GPU stress run on the page. */
  | { type: 'stream' };

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
  | { type: 'stream'; stream: RequestStream }
  /** `stream`: the error answers a 'stream' request. */
  | { type: 'error'; message: string; stream?: boolean };
