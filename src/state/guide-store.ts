// The tuning guide for the current source: once the max_split sweep is in, the other settings worth
// trying are replayed in a sweep worker and ranked against the current config (trace/tuning-guide.ts).
import { create } from 'zustand';
import { MIN_BLOCK_SIZE } from '../allocator/constants';
import { RequestKind } from '../trace/stream/request-stream';
import type { SweepRow } from '../trace/sweep/sweep';
import { adviseMaxSplit } from '../trace/sweep/sweep-advice';
import { guideCandidates, tuningGuide, type TuningGuide } from '../trace/sweep/tuning-guide';
import type { SweepJob } from '../worker/sweep-worker';
import { sourceStream, useSession } from './session-store';
import { AsyncLimiter } from '../lib/async-limiter';
import { replayBasis, runSweepJobs } from './sweep-pool';
import { sweepAgain, useSweep } from './sweep-store';

interface GuideState {
  guide: TuningGuide | null;
  /** The source the guide's figures were replayed on (the view shows them only beside it). */
  source: string | null;
  error: string | null;
  /** Why there is no guide for this source (no requests to replay), if there is none. */
  unavailable: string | null;
}

export const useGuide = create<GuideState>()(() => ({ guide: null, source: null, error: null, unavailable: null }));

/** One guide at a time: a newer one stops the one being built and takes its place. */
const guides = new AsyncLimiter();

async function build(superseded: AbortSignal): Promise<void> {
  const source = useSession.getState().summary?.source ?? null;
  useGuide.setState({ guide: null, source, error: null, unavailable: null });
  if (useSession.getState().summary?.requests === 0) {
    useGuide.setState({ unavailable: 'This snapshot has no allocation history: there is nothing to replay, so no setting to compare.' });
    return;
  }
  const { rows, largestRequest } = useSweep.getState();
  const basis = replayBasis();
  if (!basis) return;
  const { asked, recorded, capacity } = basis;
  const best = adviseMaxSplit(rows.filter((r): r is SweepRow => r !== null), largestRequest)?.best.max_split_size_mb ?? null;
  const stream = await sourceStream();
  if (superseded.aborted) return;
  const sizes = new Set<number>();
  for (let i = 0; i < stream.length; i++) {
    if (stream.kind[i] === RequestKind.alloc) sizes.add(Math.ceil(stream.size[i]! / MIN_BLOCK_SIZE));
  }
  const facts = { largestRequest, distinctSizes: sizes.size, capacity };
  const candidates = guideCandidates(asked, best, facts);
  const found: SweepRow[] = [];
  let error: string | null = null;
  const job: SweepJob = {
    kind: 'source',
    stream,
    base: asked,
    recorded,
    capacity,
    settings: [],
    configs: [asked, ...candidates.map((c) => c.config)].map((config, index) => ({ index, config })),
  };
  const run = runSweepJobs([job], (index, row) => (found[index] = row), (message) => (error = message));
  superseded.addEventListener('abort', run.stop);
  await run.done;
  if (superseded.aborted) return;
  if (error !== null) {
    useGuide.setState({ error });
    return;
  }
  const tried = candidates.map((c, i) => ({ kind: c.kind, row: found[i + 1]! }));
  useGuide.setState({ guide: tuningGuide(found[0]!, tried, facts) });
}

/** Resolves when no guide is being built or waits. */
export function guideIdle(): Promise<void> {
  return guides.idle();
}

const clear = async (): Promise<void> => useGuide.setState({ guide: null, source: null, error: null, unavailable: null });

/** Rebuilds the guide whenever a sweep completes (a new source, config or cap). */
export function installGuide(): void {
  useSweep.subscribe((s, before) => {
    if (s.done && !before.done) void guides.schedule(build);
    // A new sweep (a new source, config or cap): the guide of the last one no longer applies, and
    // one still being built for it stops (it would show that source's figures under this one).
    else if (!s.done && before.done) void guides.schedule(clear);
  });
  // A new source is being read: a guide under way stops, and is built again after the sweep that
  // follows (for the new source, or the old one if the new one fails to open).
  useSession.subscribe((s, before) => {
    if (s.opening && !before.opening && guides.busy) {
      sweepAgain();
      void guides.schedule(clear);
    }
  });
}
