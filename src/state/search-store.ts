// The search box: a query (an address, a size range, text of a frame) answered by the replay worker
// with the requests it matches (trace/measures/event-search.ts); stepping moves the cursor to the
// next or previous of them. The segment map marks the matching blocks at the cursor.
import { create } from 'zustand';
import { stepInSorted } from '../lib/binary-search';
import type { SearchQuery } from '../trace/measures/event-search';
import { callWorker } from './replay-client';
import { useSession } from './session-store';

interface SearchState {
  /** The query as typed and last searched. */
  input: string;
  query: SearchQuery | null;
  /** Requests matched, ascending. */
  requests: Int32Array | null;
  /** Text queries: the ids whose stacks match. */
  ids: ReadonlySet<number> | null;
  error: string | null;
  search(input: string): Promise<void>;
  /** Enter in the box: searches `input` unless it is the search shown, then steps in `direction`. */
  find(input: string, direction: 1 | -1): Promise<void>;
  /** The cursor moves to the next (1) or previous (-1) matching request, wrapping around. */
  step(direction: 1 | -1): void;
  clear(): void;
}

const EMPTY = { input: '', query: null, requests: null, ids: null, error: null };

/** The searches under way: window.splitscope.ready() waits for them and the seeks they end in. */
let pending = 0;
let settle: (() => void) | null = null;
let quiet: Promise<void> = Promise.resolve();

async function tracked(work: () => Promise<void>): Promise<void> {
  if (pending++ === 0) quiet = new Promise((resolve) => (settle = resolve));
  try {
    await work();
  } finally {
    if (--pending === 0) settle?.();
  }
}

/** Resolves when no search is under way (its step, if any, has asked for its seek). */
export function searchIdle(): Promise<void> {
  return quiet;
}

export const useSearch = create<SearchState>()((set, get) => ({
  ...EMPTY,
  search(input) {
    return tracked(async () => {
      if (input.trim() === '') {
        set(EMPTY);
        return;
      }
      const sourceId = useSession.getState().sourceId;
      try {
        const { query, matches } = await callWorker((w) => w.search(input));
        if (useSession.getState().sourceId !== sourceId) return;
        set({ input, query, requests: matches.requests, ids: matches.ids ? new Set(matches.ids) : null, error: null });
      } catch (e) {
        set({ input, error: e instanceof Error ? e.message : String(e) });
      }
    });
  },
  find(input, direction) {
    return tracked(async () => {
      if (input !== get().input || !get().requests) await get().search(input);
      get().step(direction);
    });
  },
  step(direction) {
    const { requests } = get();
    if (!requests) return;
    const target = stepInSorted(requests, useSession.getState().cursor, direction);
    if (target !== null) useSession.getState().seek(target);
  },
  clear() {
    set(EMPTY);
  },
}));

/** A new source, or another device of it, ends the search. */
export function installSearch(): void {
  useSession.subscribe((s, prev) => {
    if (s.sourceId !== prev.sourceId || s.settings.device !== prev.settings.device) useSearch.setState(EMPTY);
  });
}
