// The search box: a query (an address, a size range, text of a frame) answered by the replay worker
// with the requests it matches (trace/measures/event-search.ts), a derived result of the source, the
// device and the query; stepping moves the cursor to the next or previous of them. The segment map
// marks the matching blocks at the cursor.
import { create } from 'zustand';
import { queryOptions } from '@tanstack/react-query';
import { stepInSorted } from '../lib/binary-search';
import type { SearchQuery } from '../trace/measures/event-search';
import type { SourceKey } from '../worker/replay-settings';
import { derived } from './derived';
import { callWorker } from './replay-client';
import { currentKey, useSession } from './session-store';
import { sourceKeyOf, sourceParts } from './view-key';

export interface SearchResult {
  query: SearchQuery | null;
  /** Requests matched, ascending. */
  requests: Int32Array;
  /** Text queries: the ids whose stacks match. */
  ids: ReadonlySet<number> | null;
}

/** The query as typed and last searched ('' : none). */
export const useSearch = create<{ input: string }>()(() => ({ input: '' }));

export function searchQuery(key: SourceKey, input: string) {
  return queryOptions({
    queryKey: ['search', key.source, ...sourceParts(key), input],
    queryFn: async (): Promise<SearchResult> => {
      const { query, matches } = await callWorker((w) => w.search(key, input));
      return { query, requests: matches.requests, ids: matches.ids ? new Set(matches.ids) : null };
    },
  });
}

/** The search of `input` on the view's source, run if not yet. */
export function search(input: string): Promise<SearchResult | null> {
  useSearch.setState({ input: input.trim() === '' ? '' : input });
  if (input.trim() === '') return Promise.resolve(null);
  return derived.fetchQuery(searchQuery(sourceKeyOf(currentKey()), input));
}

/** The cursor moves to the next (1) or previous (-1) request that `result` matches, wrapping around. */
export function stepMatch(result: SearchResult | null | undefined, direction: 1 | -1): void {
  if (!result) return;
  const target = stepInSorted(result.requests, useSession.getState().cursor, direction);
  if (target !== null) useSession.getState().seek(target);
}

/** Enter in the box: searches `input` (if not the search shown), then steps in `direction`. */
export async function find(input: string, direction: 1 | -1): Promise<void> {
  try {
    stepMatch(await search(input), direction);
  } catch {
    // The box shows the query's error.
  }
}

export function clearSearch(): void {
  useSearch.setState({ input: '' });
}
