// Which code holds the memory at the cursor (trace/measures/memory-by-stack.ts), fetched from the
// replay worker while the stack panel is open, and what the user selected in it: a frame or an
// allocation site, whose blocks the segment map marks and whose bytes the timeline draws.
import { create } from 'zustand';
import { AsyncLimiter } from '../lib/async-limiter';
import type { StackSelection } from '../trace/measures/allocation-stacks';
import { idsUnder, nodeAtPath, type StackTree } from '../trace/measures/memory-by-stack';
import type { ReplaySummary } from '../worker/replay-protocol';
import { callWorker } from './replay-client';
import { useSession } from './session-store';

interface StackState {
  tree: StackTree | null;
  /** The request the tree is at. */
  at: number | null;
  error: string | null;
  selection: StackSelection | null;
  /** Requested bytes of the selection after each request. */
  series: Float64Array | null;
  /** The logical ids of the selection's live allocations at `at`. */
  selectedIds: ReadonlySet<number> | null;
  select(selection: StackSelection | null): void;
}

const trees = new AsyncLimiter();
const serieses = new AsyncLimiter();

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The selection's live ids in `tree`: a node's subtree, or the allocations whose innermost frame is the site. */
function idsOf(tree: StackTree | null, selection: StackSelection | null): ReadonlySet<number> | null {
  if (!tree || !selection) return null;
  if ('path' in selection) {
    const k = nodeAtPath(tree, selection.path);
    return k >= 0 ? idsUnder(tree, k) : new Set();
  }
  const ids = new Set<number>();
  for (let j = 0; j < tree.ids.length; j++) if (tree.label[tree.leaf[j]!] === selection.site) ids.add(tree.ids[j]!);
  return ids;
}

export const useStacks = create<StackState>()((set, get) => ({
  tree: null,
  at: null,
  error: null,
  selection: null,
  series: null,
  selectedIds: null,
  select(selection) {
    set({ selection, selectedIds: idsOf(get().tree, selection), series: null });
    requestSeries();
  },
}));

function requestTree(): void {
  void trees.schedule(async () => {
    const { view, sourceId } = useSession.getState();
    if (!view) return;
    try {
      const tree = await callWorker((w) => w.stacks(view.cursor));
      // A newer source replaced this one meanwhile: its tree comes next.
      if (useSession.getState().sourceId !== sourceId) return;
      useStacks.setState({ tree, at: view.cursor, error: null, selectedIds: idsOf(tree, useStacks.getState().selection) });
    } catch (e) {
      useStacks.setState({ error: message(e) });
    }
  });
}

function requestSeries(): void {
  void serieses.schedule(async () => {
    const { selection } = useStacks.getState();
    if (!selection) return;
    try {
      const series = await callWorker((w) => w.stackSeries(selection));
      if (useStacks.getState().selection === selection) useStacks.setState({ series });
    } catch (e) {
      useStacks.setState({ error: message(e) });
    }
  });
}

/** Resolves when no tree or series is being fetched (tests, benchmarks). */
export async function stacksIdle(): Promise<void> {
  while (trees.busy || serieses.busy) await Promise.all([trees.idle(), serieses.idle()]);
}

const isOpen = (): boolean => useSession.getState().look.panels.includes('stacks');
const PLAYING_MS = 250;
let playTimer: ReturnType<typeof setTimeout> | null = null;

/** Which requests a replay failed, and of which source: what a selection's series depends on. */
function oomKey(summary: ReplaySummary | null): string {
  return summary ? `${summary.source}:${summary.device}:${summary.ooms.map((o) => o.request).join(',')}` : '';
}

/** Follows the view while the stack panel is open: a new cursor or replay, a new tree; a new replay or
 * source, a new series (a what-if's OOMs change which allocs exist); a new source drops the selection. */
export function installStacks(): void {
  useSession.subscribe((s, prev) => {
    if (s.sourceId !== prev.sourceId) useStacks.setState({ tree: null, at: null, selection: null, series: null, selectedIds: null, error: null });
    const opened = s.look.panels.includes('stacks') && !prev.look.panels.includes('stacks');
    if (!isOpen() || !s.view) return;
    // While playing, a tree at most every PLAYING_MS (each takes the replay worker from the seeks that
    // play); the last view's comes once the cursor rests.
    if (opened || s.view !== prev.view) {
      if (!s.playing || opened) requestTree();
      else if (playTimer === null) playTimer = setTimeout(() => ((playTimer = null), requestTree()), PLAYING_MS);
    }
    // A replay changes the series only through its OOMs (a failed alloc never existed): a slider
    // step that fails the same requests asks the worker for nothing.
    const oomsChanged = s.summary !== prev.summary && oomKey(s.summary) !== oomKey(prev.summary);
    if ((opened || oomsChanged) && useStacks.getState().selection) requestSeries();
  });
}
