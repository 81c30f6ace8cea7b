// Which code holds the memory at the cursor (trace/measures/memory-by-stack.ts), a derived result of
// the view key and the cursor fetched from the replay worker while the stack panel is open, and what
// the user selected in it: a frame or an allocation site, whose blocks the segment map marks and whose
// bytes the timeline draws (another derived result: the view key's OOMs decide which allocs existed).
import { create } from 'zustand';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import type { StackSelection } from '../trace/measures/allocation-stacks';
import { idsUnder, nodeAtPath, type StackTree } from '../trace/measures/memory-by-stack';
import type { ViewKey } from '../worker/replay-settings';
import { throwIfAborted } from './derived';
import { callWorker } from './replay-client';
import { replayedKey } from './session-store';
import { keyId } from './view-key';

/** The stack view's selection (a share link carries it). */
export const useStacks = create<{ selection: StackSelection | null; select(selection: StackSelection | null): void }>()((set) => ({
  selection: null,
  select(selection) {
    set({ selection });
  },
}));

/** The tree after request `cursor` under `key` (the last cursor's stays shown while the next comes, as the map's does). */
export function stackTreeQuery(key: ViewKey, cursor: number) {
  return queryOptions({
    queryKey: ['stacks', key.source, keyId(key), cursor],
    queryFn: async ({ signal }): Promise<{ at: number; key: ViewKey; tree: StackTree }> => {
      await replayedKey(key, signal);
      throwIfAborted(signal);
      return { at: cursor, key, tree: await callWorker((w) => w.stacks(key, cursor)) };
    },
    placeholderData: keepPreviousData,
    gcTime: 10_000,
  });
}

/** Requested bytes of the selection after each request, under `key`. */
export function stackSeriesQuery(key: ViewKey, selection: StackSelection) {
  return queryOptions({
    queryKey: ['stack-series', key.source, keyId(key), selection],
    queryFn: async ({ signal }): Promise<Float64Array> => {
      await replayedKey(key, signal);
      throwIfAborted(signal);
      return callWorker((w) => w.stackSeries(key, selection));
    },
  });
}

/** The selection's live ids in `tree`: a node's subtree, or the allocations whose innermost frame is the site. */
export function idsOf(tree: StackTree | null, selection: StackSelection | null): ReadonlySet<number> | null {
  if (!tree || !selection) return null;
  if ('path' in selection) {
    const k = nodeAtPath(tree, selection.path);
    return k >= 0 ? idsUnder(tree, k) : new Set();
  }
  const ids = new Set<number>();
  for (let j = 0; j < tree.ids.length; j++) if (tree.label[tree.leaf[j]!] === selection.site) ids.add(tree.ids[j]!);
  return ids;
}
