// The stack view's derived results for the view key: the tree at the cursor (while playing, at most
// every PLAYING_MS: each takes the replay worker from the seeks that play) and the selection's bytes.
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { failure } from '../state/derived';
import { useSession } from '../state/session-store';
import { stackSeriesQuery, stackTreeQuery, useStacks } from '../state/stack-store';
import { keyFromId, keyId, keyOf } from '../state/view-key';
import type { ViewKey } from '../worker/replay-settings';
import type { StackTree } from '../trace/measures/memory-by-stack';

const PLAYING_MS = 250;

/** `cursor`, but while playing only every PLAYING_MS. */
function useThrottled(cursor: number, playing: boolean): number {
  const [shown, setShown] = useState(cursor);
  useEffect(() => {
    if (!playing) {
      setShown(cursor);
      return;
    }
    const timer = setTimeout(() => setShown(cursor), PLAYING_MS);
    return () => clearTimeout(timer);
  }, [cursor, playing]);
  return playing ? shown : cursor;
}

/** The view key while `open` (a closed stack view does not render again for each new key), else a stand-in. */
function useKeyWhile(open: boolean): ViewKey {
  const id = useSession((s) => (open ? keyId(keyOf(s.sourceId, s.settings)) : ''));
  return useMemo(() => (id ? keyFromId(id) : CLOSED), [id]);
}
const CLOSED: ViewKey = { source: -1, conf: null, capacityBytes: null };

/** The tree of the view key at the cursor (the last cursor's while the next comes); null before any. */
export function useStackTree(open: boolean): { tree: StackTree | null; at: number | null; current: boolean; error: string | null } {
  const key = useKeyWhile(open);
  const { cursor, playing } = useSession(useShallow((s) => ({ cursor: open ? (s.view?.cursor ?? -1) : -1, playing: open && s.playing })));
  const at = useThrottled(cursor, playing);
  const q = useQuery({ ...stackTreeQuery(key, at), enabled: open && at >= 0 });
  // A placeholder of another key is never shown (one of another cursor is, as the map's is).
  const data = q.data && keyId(q.data.key) === keyId(key) ? q.data : null;
  return { tree: data?.tree ?? null, at: data?.at ?? null, current: data !== null && data.at === cursor, error: failure(q.error) };
}

/** Requested bytes of the selection over the requests (null: none selected, or not in yet). */
export function useSelectionSeries(open: boolean): Float64Array | null {
  const key = useKeyWhile(open);
  const selection = useStacks((s) => s.selection);
  const q = useQuery({ ...stackSeriesQuery(key, selection ?? { site: '' }), enabled: open && selection !== null });
  return selection ? (q.data ?? null) : null;
}
