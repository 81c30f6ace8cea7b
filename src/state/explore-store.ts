// The sweep explorer: the view's source under every value of roundup_power2_divisions or
// garbage_collection_threshold (on top of the current config), or a generated workload under many
// seeds (how likely an OOM is), replayed in parallel sweep workers. What was asked (the axis and its
// values) is the user's; the rows are a derived result of the view key and that.
import { create } from 'zustand';
import { queryOptions } from '@tanstack/react-query';
import { PARAM_VALUES, withParam, type SweepParam, type SweepRow } from '../trace/sweep/sweep';
import type { ViewKey } from '../worker/replay-settings';
import type { SweepJob } from '../worker/sweep-worker';
import { throwIfAborted } from './derived';
import { replayedKey, streamOf, useSession } from './session-store';
import { collectRows, deal, replayBasis, workerCount } from './sweep-pool';
import { keyId, sourceKeyOf } from './view-key';

export type ExploreAxis = SweepParam | 'seed';

/** What the explorer was asked to sweep (null: nothing yet). */
export const useExplore = create<{ asked: { axis: ExploreAxis; values: number[] } | null }>()(() => ({ asked: null }));

/** Asks for `axis` (default values for a parameter; seeds 1..`seeds` for a workload). */
export function explore(axis: ExploreAxis, options: { values?: number[]; seeds?: number } = {}): void {
  const values = options.values ?? (axis === 'seed' ? Array.from({ length: options.seeds ?? 20 }, (_, i) => i + 1) : [...PARAM_VALUES[axis]]);
  useExplore.setState({ asked: { axis, values } });
}

/** A new source: what was asked of the last one no longer applies. */
export function clearExplore(): void {
  useExplore.setState({ asked: null });
}

export function exploreQuery(key: ViewKey, axis: ExploreAxis, values: readonly number[]) {
  return queryOptions({
    queryKey: ['explore', key.source, keyId(key), axis, values],
    queryFn: async ({ signal }): Promise<SweepRow[]> => {
      const shown = await replayedKey(key, signal);
      const { asked, recorded, capacity, calls } = replayBasis(shown);
      const n = workerCount(values.length);
      let jobs: SweepJob[];
      if (axis === 'seed') {
        const link = useSession.getState().sourceLink;
        if (link?.kind !== 'workload' || useSession.getState().sourceId !== key.source) throw new Error('Seeds apply to the built-in workloads: pick one as the source.');
        jobs = deal(values.map((seed, index) => ({ index, seed })), n).map(({ items, claim }) => ({
          kind: 'seeds',
          workload: link.id,
          params: link.params,
          config: asked,
          capacity,
          seeds: items,
          ...(claim ? { claim } : {}),
        }));
      } else {
        const configs = values.map((v, index) => ({ index, config: withParam(asked, axis, v) }));
        const stream = await streamOf(sourceKeyOf(key));
        throwIfAborted(signal);
        jobs = deal(configs, n).map(({ items, claim }) => ({ kind: 'source', stream, base: asked, recorded, capacity, calls, settings: [], configs: items, ...(claim ? { claim } : {}) }));
      }
      return collectRows(jobs, values.length, signal);
    },
  });
}
