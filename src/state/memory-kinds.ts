// What the memory is, as derived results of the view key (trace/categories, trace/explain): each
// allocation's category and the requested bytes over the requests stacked by category, for the
// timeline, the stats and the map's filter; and the story of the key's OOM with its fixes, each
// replayed, for the OOM box. Both computed in the replay worker.
import { queryOptions } from '@tanstack/react-query';
import type { SourceKey, ViewKey } from '../worker/replay-settings';
import { callWorker } from './replay-client';
import { rested } from './derived';
import { keyId, sourceParts } from './view-key';

/** Config alone does not change what the memory is: only the source (its device, a prediction's
 * size) and which requests the replay on screen refused (`failed`, its OOMs), so a slider step reuses it. */
export function memoryKindsQuery(key: SourceKey, failed: readonly number[]) {
  return queryOptions({
    queryKey: ['memory-kinds', key.source, ...sourceParts(key), failed.join(',')],
    queryFn: async ({ signal }) => {
      // After the first view is drawn: an O(requests) pass in the worker must not delay it.
      await rested(signal, REST_MS);
      return callWorker((w) => w.memoryKinds(key, [...failed]));
    },
  });
}

/** What the memory is waits for the view to rest this long (a file's first view, a drag's steps). */
const REST_MS = 300;

/** Above this many requests, the fixes are replayed when asked for (each is a whole replay in the
 * replay worker, which seeks wait on meanwhile). */
export const EXPLAIN_AT_ONCE = 200_000;

export function explainQuery(key: ViewKey) {
  return queryOptions({
    queryKey: ['explain', key.source, keyId(key)],
    queryFn: async ({ signal }) => {
      await rested(signal, REST_MS);
      return callWorker((w) => w.explain(key));
    },
  });
}
