// The tuning guide for the view: once the max_split sweep of its key is in, the other settings worth
// trying are replayed in sweep workers and ranked against the current config (trace/sweep/tuning-guide.ts).
// Keyed by the whole view key: any change of config, cap, device or inserted calls replaces it.
import { queryOptions } from '@tanstack/react-query';
import { MIN_BLOCK_SIZE } from '../allocator/constants';
import { RequestKind } from '../trace/stream/request-stream';
import type { SweepRow } from '../trace/sweep/sweep';
import { adviseMaxSplit } from '../trace/sweep/sweep-advice';
import { guideCandidates, tuningGuide, type TuningGuide } from '../trace/sweep/tuning-guide';
import type { ViewKey } from '../worker/replay-settings';
import type { SweepJob } from '../worker/sweep-worker';
import { derived, rested, throwIfAborted } from './derived';
import { replayedKey, streamOf } from './session-store';
import { sweepQuery } from './sweep';
import { collectRows, replayBasis } from './sweep-pool';
import { keyId, sourceKeyOf } from './view-key';

/** The guide of a key starts once the key has rested this long: each slider step of a drag is a key,
 * and a guide begun for each would take a core from the next step's replay (its sweep workers ended
 * and started again at every step). */
const REST_MS = 300;

/** Why there is no guide for a source (no requests to replay). */
export const NO_GUIDE = 'This snapshot has no allocation history: there is nothing to replay, so no setting to compare.';

/** The guide for `key` (null: the source has no requests); `recordedConf`: the source's recorded config. */
export function guideQuery(key: ViewKey, recordedConf: string) {
  return queryOptions({
    queryKey: ['guide', key.source, keyId(key)],
    queryFn: async ({ signal }): Promise<TuningGuide | null> => {
      const shown = await replayedKey(key, signal);
      if (shown.requests === 0) return null;
      await rested(signal, REST_MS);
      const sweep = await derived.fetchQuery(sweepQuery(key, recordedConf));
      throwIfAborted(signal);
      const stream = await streamOf(sourceKeyOf(key));
      throwIfAborted(signal);
      const sizes = new Set<number>();
      for (let i = 0; i < stream.length; i++) {
        if (stream.kind[i] === RequestKind.alloc) sizes.add(Math.ceil(stream.size[i]! / MIN_BLOCK_SIZE));
      }
      const { asked, recorded, capacity, calls } = replayBasis(shown);
      const facts = { largestRequest: sweep.largestRequest, distinctSizes: sizes.size, capacity, coverage: shown.coverage };
      const best = adviseMaxSplit(sweep.rows.filter((r): r is SweepRow => r !== null), sweep.largestRequest, shown.coverage)?.best.max_split_size_mb ?? null;
      const candidates = guideCandidates(asked, best, facts);
      const configs = [asked, ...candidates.map((c) => c.config)].map((config, index) => ({ index, config }));
      const job: SweepJob = { kind: 'source', stream, base: asked, recorded, capacity, calls, settings: [], configs };
      const found = await collectRows([job], configs.length, signal);
      return tuningGuide(found[0]!, candidates.map((c, i) => ({ kind: c.kind, row: found[i + 1]! })), facts);
    },
  });
}
