// The one keyed mechanism for the page's derived results (sweep, guide, comparison, explorer, stack
// view, search, digests, the time axis, the event list): TanStack Query's client. Each result is a
// query whose key starts with what it was computed for (the view key, or its source and device);
// results are cached by key (going back to a config shows its figures at once), a result whose key
// no panel asks for any more is cancelled through its AbortSignal (a dragged slider stops the guide
// it supersedes), and every panel knows whether what it holds is pending. A panel never shows a
// result computed for another key (views/pending.tsx).
import { QueryClient, type Query } from '@tanstack/react-query';
import { SUPERSEDED } from '../worker/replay-settings';

export const derived = new QueryClient({
  defaultOptions: {
    queries: {
      // A result is a pure function of its key: never stale, never refetched on focus, not retried.
      staleTime: Infinity,
      gcTime: 5 * 60_000,
      retry: false,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
      networkMode: 'always',
      // Typed arrays and large row lists: compared by identity, not walked.
      structuralSharing: false,
    },
  },
});

/**
 * Every derived result's key starts with its kind and the source it is for (the view key's source),
 * except the digests of other files, which outlive the source on screen (a job's ranks stay beside
 * whichever rank is open). A new source drops the last one's results: on a large trace its request
 * stream, timelines and trees are hundreds of MB.
 */
export function forgetOtherSources(source: number): void {
  const stale = (q: Query): boolean => q.queryKey[0] !== 'digest' && q.queryKey[1] !== source;
  void derived.cancelQueries({ predicate: stale });
  derived.removeQueries({ predicate: stale });
}

/** Whether `e` says the worker no longer holds the source it was asked about (a newer one opened). */
export function isSuperseded(e: unknown): boolean {
  return e instanceof Error && e.name === SUPERSEDED;
}

/** Rejects with the signal's reason once it aborts (an await that a superseded query should not pass). */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('Superseded.', 'AbortError');
}

/** Waits `ms` (a result worth starting only once its key has rested: a dragged slider's steps pass
 * through keys nobody will look at); rejects as soon as `signal` aborts. */
export function rested(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (): void => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('Superseded.', 'AbortError'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', fail);
      resolve();
    }, ms);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** Resolves when no derived result is being computed (it may start more: callers loop until quiet). */
export function derivedIdle(): Promise<void> {
  if (derived.isFetching() === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const unsubscribe = derived.getQueryCache().subscribe(() => {
      if (derived.isFetching() === 0) {
        unsubscribe();
        resolve();
      }
    });
  });
}

/** A short message for a derived result that failed (a superseded one is not a failure: it is pending). */
export function failure(e: unknown): string | null {
  if (!e || isSuperseded(e) || (e instanceof DOMException && e.name === 'AbortError')) return null;
  return e instanceof Error ? e.message : String(e);
}
