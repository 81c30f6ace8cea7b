// Several configs side by side over the view's source: each replayed in the replay worker under the
// rest of the view key (cap, device, inserted calls), and their states at the cursor. The configs
// compared are part of the session (a link carries them); the replays are derived results keyed by the
// view key and the configs, the states at the cursor by the cursor too.
import { create } from 'zustand';
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { configRefusal } from '../allocator/config-parser';
import type { CompareRun, CursorView } from '../worker/replay-protocol';
import type { ViewKey } from '../worker/replay-settings';
import { derived } from './derived';
import { callWorker } from './replay-client';
import { useSession } from './session-store';
import { keyId } from './view-key';

export const MIN_COMPARED = 2;
export const MAX_COMPARED = 4;
/** What "Compare configs" opens with after the current config: the two usual cures for fragmentation. */
export const SUGGESTED_CONFS = ['max_split_size_mb:128', 'expandable_segments:True'];

/** A config of the comparison the user typed that does not parse, or too few configs. */
export const useCompare = create<{ error: string | null }>()(() => ({ error: null }));

/** The part of the view key a comparison shares: everything but the config. */
const runsId = (key: ViewKey, confs: readonly string[]): string => JSON.stringify([keyId({ ...key, conf: null }), confs]);

/** The configs' whole replays (their timelines and figures), and their states at `cursor` on the way. */
export function compareRunsQuery(key: ViewKey, confs: readonly string[], cursor: number) {
  return queryOptions({
    queryKey: ['compare', key.source, runsId(key, confs)],
    queryFn: async (): Promise<CompareRun[]> => {
      const runs = await callWorker((w) => w.compare(key, [...confs], cursor));
      // The states at the cursor came with the replays: no second pass for them.
      derived.setQueryData(compareAtQuery(key, confs, cursor).queryKey, runs.map((r) => r.view));
      return runs;
    },
  });
}

/** The configs' states after request `cursor` (the previous cursor's are shown until these come: the
 * main view does the same while it seeks). */
export function compareAtQuery(key: ViewKey, confs: readonly string[], cursor: number) {
  return queryOptions({
    queryKey: ['compare-at', key.source, runsId(key, confs), cursor],
    queryFn: async ({ queryKey }): Promise<CursorView[]> => {
      await derived.fetchQuery(compareRunsQuery(key, confs, cursor));
      // The runs, made just now for this cursor, brought these states with them.
      return derived.getQueryData<CursorView[]>(queryKey) ?? callWorker((w) => w.compareSeek(key, [...confs], cursor));
    },
    placeholderData: keepPreviousData,
    gcTime: 10_000,
  });
}

/** Opens the comparison on `confs` (default: the config on screen and the suggested ones). */
export function openCompare(confs?: readonly string[]): void {
  const current = useSession.getState().summary?.conf ?? '';
  const wanted = (confs ?? [current, ...SUGGESTED_CONFS.filter((c) => c !== current)]).slice(0, MAX_COMPARED);
  const problem = wanted.map(configRefusal).find((p) => p !== null);
  if (problem || wanted.length < MIN_COMPARED) {
    useCompare.setState({ error: problem ?? `A comparison needs at least ${MIN_COMPARED} configs.` });
    return;
  }
  useCompare.setState({ error: null });
  useSession.getState().setCompare(wanted);
}

export function closeCompare(): void {
  useCompare.setState({ error: null });
  useSession.getState().setCompare(null);
}

export function setCompareConf(index: number, text: string): void {
  const confs = useSession.getState().compare;
  if (!confs || confs[index] === text) return;
  const problem = configRefusal(text);
  if (problem) {
    useCompare.setState({ error: `Config ${index + 1}: ${problem}` });
    return;
  }
  useCompare.setState({ error: null });
  useSession.getState().setCompare(confs.map((c, i) => (i === index ? text : c)));
}

export function addCompareConf(): void {
  const confs = useSession.getState().compare;
  if (confs && confs.length < MAX_COMPARED) useSession.getState().setCompare([...confs, '']);
}

export function removeCompareConf(index: number): void {
  const confs = useSession.getState().compare;
  if (confs && confs.length > MIN_COMPARED) useSession.getState().setCompare(confs.filter((_, i) => i !== index));
}
