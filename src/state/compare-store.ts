// Several configs side by side over the same source: each replayed in the session's worker under
// the session's cap (device, inserted calls), their states at the session's cursor, and the figures
// that differ.
import { create } from 'zustand';
import { ConfigError } from '../allocator/config-error';
import { parseAllocConf } from '../allocator/config-parser';
import { AsyncLimiter } from '../lib/async-limiter';
import type { CompareRun, CursorView } from '../worker/replay-protocol';
import { callWorker } from './replay-client';
import { useSession } from './session-store';

export const MIN_COMPARED = 2;
export const MAX_COMPARED = 4;
/** What "Compare configs" opens with after the current config: the two usual cures for fragmentation. */
export const SUGGESTED_CONFS = ['max_split_size_mb:128', 'expandable_segments:True'];

interface CompareState {
  /** The configs compared (PYTORCH_CUDA_ALLOC_CONF strings, '' for the defaults); null: closed. */
  confs: string[] | null;
  /** Their replays, in the same order; null until the first arrives. */
  runs: CompareRun[] | null;
  /** Their states at the session's cursor. */
  views: CursorView[] | null;
  /** A config that does not parse (by index), or a replay that failed. */
  error: string | null;
  open(confs?: string[]): void;
  close(): void;
  setConf(index: number, text: string): void;
  addConf(): void;
  removeConf(index: number): void;
}

/** What a comparison replays: the source, its length and the cap; a change reruns it. */
const sourceKey = (): string => {
  const s = useSession.getState();
  const { conf: _conf, ...base } = s.settings;
  return JSON.stringify([s.sourceId, s.summary?.requests ?? null, base]);
};

/** Comparisons and their seeks, each one in flight and the latest waiting (a seek after the comparison). */
const comparisons = new AsyncLimiter();
const seeks = new AsyncLimiter();
/** The source the runs on screen are for, and the cursor their views are at. */
let comparedKey = '';
let viewsAt = -1;

const failed = (e: unknown): void => useCompare.setState({ error: `The comparison failed: ${(e as Error).message}` });

function requestCompare(): void {
  void comparisons.schedule(async () => {
    const { confs } = useCompare.getState();
    const session = useSession.getState();
    if (!confs || !session.summary) return;
    comparedKey = sourceKey();
    viewsAt = session.cursor;
    try {
      // Everything but the config is the session's: source, cap, device, inserted calls.
      const runs = await callWorker((w) => w.compare(confs, session.settings, session.cursor));
      if (useCompare.getState().confs) useCompare.setState({ runs, views: runs.map((r) => r.view), error: null });
    } catch (e) {
      failed(e);
    }
    requestSeek();
  });
}

function requestSeek(): void {
  void seeks.schedule(async () => {
    await comparisons.idle();
    const cursor = useSession.getState().cursor;
    if (!useCompare.getState().runs || cursor === viewsAt) return;
    viewsAt = cursor;
    try {
      const views = await callWorker((w) => w.compareSeek(cursor));
      if (useCompare.getState().runs) useCompare.setState({ views });
    } catch (e) {
      failed(e);
    }
  });
}

/** '' when `text` parses, else why not. */
function confProblem(text: string): string {
  try {
    parseAllocConf(text);
    return '';
  } catch (e) {
    return e instanceof ConfigError ? e.message : String(e);
  }
}

export const useCompare = create<CompareState>()((set, get) => ({
  confs: null,
  runs: null,
  views: null,
  error: null,
  open(confs) {
    const current = useSession.getState().summary?.conf ?? '';
    const wanted = (confs ?? [current, ...SUGGESTED_CONFS.filter((c) => c !== current)]).slice(0, MAX_COMPARED);
    const problem = wanted.map(confProblem).find((p) => p !== '');
    if (problem || wanted.length < MIN_COMPARED) {
      set({ error: problem ?? `A comparison needs at least ${MIN_COMPARED} configs.` });
      return;
    }
    set({ confs: wanted, runs: null, views: null, error: null });
    requestCompare();
  },
  close() {
    set({ confs: null, runs: null, views: null, error: null });
  },
  setConf(index, text) {
    const confs = get().confs;
    if (!confs || confs[index] === text) return;
    const problem = confProblem(text);
    if (problem) {
      set({ error: `Config ${index + 1}: ${problem}` });
      return;
    }
    set({ confs: confs.map((c, i) => (i === index ? text : c)), error: null });
    requestCompare();
  },
  addConf() {
    const confs = get().confs;
    if (!confs || confs.length >= MAX_COMPARED) return;
    set({ confs: [...confs, ''] });
    requestCompare();
  },
  removeConf(index) {
    const confs = get().confs;
    if (!confs || confs.length <= MIN_COMPARED) return;
    set({ confs: confs.filter((_, i) => i !== index), runs: null, views: null });
    requestCompare();
  },
}));

// The session moves on (a new source or cap, the cursor): the comparison follows.
useSession.subscribe((s, before) => {
  if (!useCompare.getState().confs || !s.summary) return;
  if (sourceKey() !== comparedKey) requestCompare();
  else if (s.cursor !== before.cursor) requestSeek();
});

/** Resolves when no comparison or seek is in flight or waiting. */
export async function compareIdle(): Promise<void> {
  while (comparisons.busy || seeks.busy) await Promise.all([comparisons.idle(), seeks.idle()]);
}
