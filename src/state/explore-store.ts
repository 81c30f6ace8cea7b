// The sweep explorer: the current source under every value of roundup_power2_divisions or
// garbage_collection_threshold (on top of the current config), or a generated workload under many
// seeds (how likely an OOM is), replayed in parallel sweep workers.
import { create } from 'zustand';
import { PARAM_VALUES, withParam, type SweepParam, type SweepRow } from '../trace/sweep/sweep';
import type { SweepJob } from '../worker/sweep-worker';
import { sourceStream, useSession } from './session-store';
import { AsyncLimiter } from '../lib/async-limiter';
import { deal, replayBasis, runSweepJobsInto, workerCount } from './sweep-pool';

export type ExploreAxis = SweepParam | 'seed';

interface ExploreState {
  axis: ExploreAxis | null;
  /** The values swept (divisions, thresholds or seeds), and their rows as they arrive. */
  values: number[];
  rows: (SweepRow | null)[];
  done: boolean;
  error: string | null;
}

export const useExplore = create<ExploreState>()(() => ({ axis: null, values: [], rows: [], done: false, error: null }));

/** One exploration at a time: a newer one stops the one running and takes its place. */
const explorations = new AsyncLimiter();

/** Sweeps `axis` (default values for a parameter; seeds 1..`seeds` for a workload). */
export function explore(axis: ExploreAxis, options: { values?: number[]; seeds?: number } = {}): Promise<void> {
  return explorations.schedule((superseded) => run(axis, options, superseded));
}

export function exploreIdle(): Promise<void> {
  return explorations.idle();
}

async function run(axis: ExploreAxis, options: { values?: number[]; seeds?: number }, superseded: AbortSignal): Promise<void> {
  const { sourceLink } = useSession.getState();
  const basis = replayBasis();
  if (!basis) return;
  const { asked, recorded, capacity } = basis;
  let values: number[];
  let jobs: SweepJob[];
  let n: number;
  if (axis === 'seed') {
    if (sourceLink?.kind !== 'workload') {
      useExplore.setState({ axis, values: [], rows: [], done: true, error: 'Seeds apply to the built-in workloads: pick one as the source.' });
      return;
    }
    values = options.values ?? Array.from({ length: options.seeds ?? 20 }, (_, i) => i + 1);
    n = workerCount(values.length);
    jobs = deal(values.map((seed, index) => ({ index, seed })), n).map(({ items, claim }) => ({
      kind: 'seeds',
      workload: sourceLink.id,
      params: sourceLink.params,
      config: asked,
      capacity,
      seeds: items,
      ...(claim ? { claim } : {}),
    }));
  } else {
    values = options.values ?? [...PARAM_VALUES[axis]];
    n = workerCount(values.length);
    let configs;
    try {
      configs = values.map((v, index) => ({ index, config: withParam(asked, axis, v) }));
    } catch (e) {
      useExplore.setState({ axis, values, rows: [], done: true, error: (e as Error).message });
      return;
    }
    const stream = await sourceStream();
    if (superseded.aborted) return;
    jobs = deal(configs, n).map(({ items, claim }) => ({ kind: 'source', stream, base: asked, recorded, capacity, settings: [], configs: items, ...(claim ? { claim } : {}) }));
  }
  useExplore.setState({ axis, values, rows: values.map(() => null), done: false, error: null });
  const mine = runSweepJobsInto(jobs, useExplore, n);
  superseded.addEventListener('abort', mine.stop);
  await mine.done;
  if (!superseded.aborted) useExplore.setState({ done: true });
}
