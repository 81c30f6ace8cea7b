// The sweep under the max_split slider: the view's source replayed at every slider position, in
// parallel workers. It is keyed by what it depends on (the source and device, the config but
// max_split, the cap, the inserted calls), so a slider step keeps it and any other change replaces it.
import { queryOptions } from '@tanstack/react-query';
import { MiB } from '../allocator/constants';
import { configToString, type AllocatorConfig } from '../allocator/config';
import { parseAllocConf } from '../allocator/config-parser';
import { framesDrawn } from '../lib/frame-scheduler';
import { RequestKind, type RequestStream } from '../trace/stream/request-stream';
import type { SweepRow } from '../trace/sweep/sweep';
import type { ReplaySummary } from '../worker/replay-protocol';
import type { ViewKey } from '../worker/replay-settings';
import type { SweepJob } from '../worker/sweep-worker';
import { derived, throwIfAborted } from './derived';
import { nextFrame } from './draw-sync';
import { maxSplitSteps } from './max-split-steps';
import { replayed, streamOf } from './session-store';
import { collectRows, deal, replayBasis, workerCount } from './sweep-pool';
import { sourceKeyOf } from './view-key';

export interface SweepResult {
  /** The settings swept (MiB, null = unlimited), in slider order. */
  values: (number | null)[];
  /** Rows by setting index; null until that setting is done. */
  rows: (SweepRow | null)[];
  done: boolean;
  /** Wall time of the sweep and the workers it used. */
  seconds: number | null;
  workers: number;
  /** The source's largest request, for the rule of thumb. */
  largestRequest: number;
}

/** The config a key asks for, max_split left out (`recordedConf`: the source's, for a key that asks for none). */
function baseConfig(conf: string | null, recordedConf: string): AllocatorConfig {
  return { ...parseAllocConf(conf ?? recordedConf).config, maxSplitSize: Infinity };
}

/**
 * The max_split slider's positions for a source: from the config's floor (large_segment_size_mb) to the
 * cap the source replays under, or else its peak reserved memory under its own config; a config change
 * moves neither end but the floor.
 */
export function sliderSteps(summary: ReplaySummary, conf: string | null): (number | null)[] {
  const top = Math.max(64, (summary.capacity?.bytes ?? summary.ownPeakReserved) / MiB);
  return maxSplitSteps(top, baseConfig(conf, summary.recordedConf).largeSegmentSize / MiB);
}

/** What a sweep depends on, for `key`: everything in it but max_split. */
function sweepGroup(key: ViewKey, recordedConf: string): string {
  const { source, device = 0, capacityBytes, emptyCacheAfter = [], resetPeakAfter = [] } = key;
  return JSON.stringify([source, device, capacityBytes, emptyCacheAfter, resetPeakAfter, configToString(baseConfig(key.conf, recordedConf))]);
}

/** The largest request of a stream. */
export function largestRequest(stream: RequestStream): number {
  let largest = 0;
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i]! > largest) largest = stream.size[i]!;
  return largest;
}

/**
 * The sweep for `key`; `recordedConf`: the source's recorded config (it names the sweep of a key that
 * asks for none). It waits for a replay of its group (the cap it resolved) and for that view's first frame (its
 * workers would take the cores from it). Its data is the whole sweep; the rows so far are in
 * sweepProgressKey's (a chart fills in as they come; the guide waits for the whole).
 */
export function sweepQuery(key: ViewKey, recordedConf: string) {
  const group = sweepGroup(key, recordedConf);
  const progressKey = sweepProgressKey(key, recordedConf);
  return queryOptions({
    queryKey: ['sweep', key.source, group],
    queryFn: async ({ signal }): Promise<SweepResult> => {
      const shown = await replayed((s) => s.key.source === key.source && sweepGroup(s.key, s.recordedConf) === group, signal);
      await nextFrame();
      await framesDrawn();
      throwIfAborted(signal);
      const values = sliderSteps(shown, shown.key.conf);
      if (shown.requests === 0) return { values: [], rows: [], done: true, seconds: null, workers: 0, largestRequest: 0 };
      const stream = await streamOf(sourceKeyOf(shown.key));
      throwIfAborted(signal);
      const basis = replayBasis(shown);
      const n = workerCount(values.length);
      const partial: SweepResult = { values, rows: values.map(() => null), done: false, seconds: null, workers: n, largestRequest: largestRequest(stream) };
      derived.setQueryData(progressKey, partial);
      const t0 = performance.now();
      const rows = await collectRows(sweepJobs(stream, basis, values, n), values.length, signal, (r) => derived.setQueryData(progressKey, { ...partial, rows: r }));
      return { ...partial, rows, done: true, seconds: (performance.now() - t0) / 1e3 };
    },
  });
}

/** Where a sweep's rows so far are kept while it runs (set by the sweep, read by its chart). */
export function sweepProgressKey(key: ViewKey, recordedConf: string): readonly unknown[] {
  return ['sweep-rows', key.source, sweepGroup(key, recordedConf)];
}

/** The jobs of a max_split sweep over `values` on `n` workers. */
function sweepJobs(stream: RequestStream, basis: ReturnType<typeof replayBasis>, values: readonly (number | null)[], n: number): SweepJob[] {
  const { asked, recorded, capacity, calls } = basis;
  const base: AllocatorConfig = { ...asked, maxSplitSize: Infinity };
  return deal(values.map((mb, index) => ({ index, mb })), n).map(({ items, claim }) => ({ kind: 'source', stream, base, recorded, capacity, calls, settings: items, ...(claim ? { claim } : {}) }));
}

/** A sweep of `values` over the replay on screen with `workers` workers, outside the cache (the bench's timing); its seconds. */
export async function timeSweep(summary: ReplaySummary, values: (number | null)[], workers: number): Promise<number> {
  const stream = await streamOf(sourceKeyOf(summary.key));
  const t0 = performance.now();
  await collectRows(sweepJobs(stream, replayBasis(summary), values, workers), values.length, new AbortController().signal, undefined, workers);
  return (performance.now() - t0) / 1e3;
}
