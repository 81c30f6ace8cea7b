// The sweep under the max_split slider: the current source replayed at every slider position, in
// parallel workers, redone when the source, the rest of the config or the cap changes (not when
// only max_split moves: that is what the sweep is for).
import { create } from 'zustand';
import { MiB } from '../allocator/constants';
import { configToString, type AllocatorConfig } from '../allocator/config';
import { RequestKind, type RequestStream } from '../trace/stream/request-stream';
import type { SweepRow } from '../trace/sweep/sweep';
import type { SweepJob } from '../worker/sweep-worker';
import { maxSplitSteps } from './max-split-steps';
import { sourceStream, useSession } from './session-store';
import { AsyncLimiter } from '../lib/async-limiter';
import { framesDrawn } from '../lib/frame-scheduler';
import { deal, replayBasis, runSweepJobsInto, workerCount } from './sweep-pool';

interface SweepState {
  /** The settings swept (MiB, null = unlimited), in slider order. */
  values: (number | null)[];
  /** Rows by setting index; null until that setting is done. */
  rows: (SweepRow | null)[];
  done: boolean;
  /** Wall time of the last complete sweep and the workers it used. */
  seconds: number | null;
  workers: number;
  error: string | null;
  /** The source's largest request, for the rule of thumb. */
  largestRequest: number;
}

export const useSweep = create<SweepState>()(() => ({ values: [], rows: [], done: false, seconds: null, workers: 0, error: null, largestRequest: 0 }));

/** One sweep at a time: a newer one stops the one running and takes its place. */
const sweeps = new AsyncLimiter();
let lastKey = '';

/** The max_split slider's top in MiB for the current view (the cap, else the peak reserved memory). */
export function sliderTopMiB(): number {
  const { settings, summary } = useSession.getState();
  return Math.max(64, (settings.capacityBytes ?? summary?.peakReserved ?? 0) / MiB);
}

/**
 * Sweeps `values` over the current source with `workers` workers (default: one per core but one);
 * resolves when every row is in.
 */
export function runSweep(values: (number | null)[] = maxSplitSteps(sliderTopMiB()), workers?: number): Promise<void> {
  return sweeps.schedule((superseded) => sweep(values, workers, superseded));
}

async function sweep(values: (number | null)[], workers: number | undefined, superseded: AbortSignal): Promise<void> {
  const basis = replayBasis();
  if (!basis) return;
  // A snapshot without history has no requests to replay: no sweep.
  if (useSession.getState().summary?.requests === 0) {
    useSweep.setState({ values: [], rows: [], done: false, seconds: null, error: null, largestRequest: 0 });
    useSweep.setState({ done: true }); // a sweep that ended: the guide follows it
    return;
  }
  const { asked, recorded, capacity } = basis;
  const base: AllocatorConfig = { ...asked, maxSplitSize: Infinity };
  const n = workerCount(values.length, workers);
  useSweep.setState({ values, rows: values.map(() => null), done: false, workers: n, error: null });
  let stream: RequestStream;
  try {
    stream = await sourceStream();
  } catch (e) {
    useSweep.setState({ error: (e as Error).message });
    return;
  }
  if (superseded.aborted) return;
  let largest = 0;
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && stream.size[i]! > largest) largest = stream.size[i]!;
  useSweep.setState({ largestRequest: largest });
  const t0 = performance.now();
  const jobs: SweepJob[] = deal(values.map((mb, index) => ({ index, mb })), n).map(({ items, claim }) => ({ kind: 'source', stream, base, recorded, capacity, settings: items, ...(claim ? { claim } : {}) }));
  const run = runSweepJobsInto(jobs, useSweep, n);
  superseded.addEventListener('abort', run.stop);
  await run.done;
  if (!superseded.aborted) useSweep.setState({ done: true, seconds: (performance.now() - t0) / 1e3 });
}

/** A sweep about to start once the view is drawn. */
let starting: Promise<void> | null = null;

/** Resolves when no sweep runs, waits, or is about to start. */
export async function sweepIdle(): Promise<void> {
  while (starting) await starting;
  await sweeps.idle();
}

/** What a sweep depends on: the source, the config but max_split, the cap. */
function sweepKey(): string {
  const { settings, summary, sourceId } = useSession.getState();
  const basis = replayBasis();
  if (!summary || !basis) return '';
  return JSON.stringify([sourceId, summary.source, summary.requests, configToString({ ...basis.asked, maxSplitSize: Infinity }), settings.capacityBytes, settings.device ?? 0]);
}

/** The next view sweeps even if its source and settings are the last sweep's (its work was stopped). */
export function sweepAgain(): void {
  lastKey = '';
}

/** Keeps the sweep in step with the view. */
export function installSweep(): void {
  useSession.subscribe((s, before) => {
    if (s.opening && !before.opening) {
      // A new source is being read: a sweep under way stops, and runs again for whatever the view shows next.
      if (sweeps.busy) {
        sweepAgain();
        void sweeps.schedule(async () => {});
      }
      return;
    }
    const opened = !s.opening && before.opening;
    if ((s.summary === before.summary && !opened) || !s.summary) return;
    const key = sweepKey();
    if (key === lastKey) return;
    lastKey = key;
    // The new view draws first: the sweep's workers would take the cores from its first frame.
    const start: Promise<void> = afterViewDrawn().then(() => {
      if (starting === start) starting = null;
      void runSweep();
    });
    starting = start;
  });
}

/** After the next frame and the draws asked for in it (a hidden tab, which gets no frames: a moment). */
async function afterViewDrawn(): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 250);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  await framesDrawn();
}
