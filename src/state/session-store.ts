// What the page shows: the source (a built-in workload or a snapshot), the settings it replays
// under, the latest replay of one under the other, and the cursor with the state after it.
import { create } from 'zustand';
import { MiB } from '../allocator/constants';
import { configToString } from '../allocator/config';
import { ConfigError } from '../allocator/config-error';
import { parseAllocConf } from '../allocator/config-parser';
import type { RequestStream } from '../trace/stream/request-stream';
import { WORKLOADS } from '../trace/stream/workloads';
import type { CursorView, FromWorker, ReplaySettings, ReplaySummary, ReplayTimeline, ToWorker } from '../worker/replay-protocol';
import { MAX_EMBEDDED_FILE_BYTES, toBase64Url, type LinkSource } from './link-codec';
import { sha256Hex } from '../lib/sha256';

/** Settings and cursor a source opens with (a share link's), instead of its own and the end. */
export interface OpenAt {
  settings: ReplaySettings;
  cursor: number | null;
  /** How the view looks: the segment map's zoom and pinned allocation, the open panels. */
  look?: ViewLook;
}

/** A zoom as a share link keeps it: d3's scale, and its x translation as a fraction of the map's width. */
export interface MapZoom {
  k: number;
  x: number;
}

export interface ViewLook {
  zoom: MapZoom | null;
  /** The allocation (request id) pinned on the segment map. */
  pinned: number | null;
  /** Panels open (ids: 'guide', 'export', 'ooms', 'explorer'). */
  panels: string[];
}

export const DEFAULT_LOOK: ViewLook = { zoom: null, pinned: null, panels: ['guide'] };

export const SAMPLE_URL = `${import.meta.env.BASE_URL}samples/train_gpt2-n12.pickle.gz`;
export const SAMPLE_NAME = 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)';
export const DEFAULT_WORKLOAD = WORKLOADS[0]!.id;
/** Files larger than this are refused before reading them into memory. */
export const MAX_FILE_BYTES = 1.5 * 2 ** 30;

interface SessionState {
  busy: boolean;
  progress: number | null;
  /** The last import or replay error; the previous result stays on screen. */
  error: string | null;
  settings: ReplaySettings;
  confError: string | null;
  summary: ReplaySummary | null;
  timeline: ReplayTimeline | null;
  /** The cursor as the user set it (the view may still be catching up). */
  cursor: number;
  view: CursorView | null;
  playing: boolean;
  /** The source as a share link names it. */
  sourceLink: LinkSource | null;
  look: ViewLook;
  setZoom(zoom: MapZoom | null): void;
  setPinned(id: number | null): void;
  setPanelOpen(panel: string, open: boolean): void;
  setConf(text: string): void;
  /** max_split_size_mb from the slider (null: unlimited), applied to the current config. */
  setMaxSplit(mb: number | null): void;
  setCapacity(bytes: number | null): void;
  /** The device whose trace replays (a snapshot of several GPUs); the config applies to every device. */
  setDevice(device: number): void;
  /** Calls inserted into the run: empty_cache() and reset_peak_memory_stats() after these requests. */
  setActions(emptyCacheAfter: number[], resetPeakAfter: number[]): void;
  seek(cursor: number): void;
  setPlaying(playing: boolean): void;
  openFile(file: File, at?: OpenAt): Promise<void>;
  openBytes(name: string, bytes: ArrayBuffer, at?: OpenAt): Promise<void>;
  openSample(at?: OpenAt): Promise<void>;
  openWorkload(id: string, params?: Record<string, number>, at?: OpenAt): void;
  dismissError(): void;
}

const worker = new Worker(new URL('../worker/replay-worker.ts', import.meta.url), { type: 'module' });
let pending = 0;
let idle: Promise<void> = Promise.resolve();
let settle: (() => void) | null = null;
/** Callers waiting for the source's request stream, answered in order. */
const streamWaiters: { resolve(s: RequestStream): void; reject(e: Error): void }[] = [];
const frameWaiters = new Map<number, ((frames: string[]) => void)[]>();
const exportWaiters: { resolve(bytes: Uint8Array<ArrayBuffer>): void; reject(e: Error): void }[] = [];
/** Seeks coalesce: one in flight, and the latest cursor asked for after it. */
let seekInFlight = false;
let seekWanted: number | null = null;
/** Replays coalesce too, so that a dragged slider never queues a backlog. */
let replayInFlight = false;
let replayWanted: { settings: ReplaySettings; cursor: number | null } | null = null;
/** A source is being opened: its replay follows only if it opens (a bad file changes nothing). */
let replayAfterOpen = false;
/** The name of the source being opened, for its error message. */
let opening = '';
/** What the source being opened becomes once it opens: its link name, settings and cursor. */
let openingAs: { link: LinkSource; at: OpenAt | undefined } | null = null;

/** Replies to other stores' requests (the comparison), which the session itself does not handle. */
const replyListeners: ((m: FromWorker) => void)[] = [];

/** Sends another store's request to the replay worker, which holds the source. */
export function sendToWorker(message: ToWorker, transfer: Transferable[] = []): void {
  send(message, transfer);
}

/** Hears the worker's replies (every one; the listener picks its own). */
export function onWorkerReply(listener: (m: FromWorker) => void): void {
  replyListeners.push(listener);
}

function send(message: ToWorker, transfer: Transferable[] = []): void {
  if (pending++ === 0) idle = new Promise((resolve) => (settle = resolve));
  useSession.setState({ busy: true });
  worker.postMessage(message, transfer);
}

function requestReplay(settings: ReplaySettings, cursor: number | null): void {
  if (replayInFlight) {
    replayWanted = { settings, cursor };
    return;
  }
  replayInFlight = true;
  send({ type: 'replay', settings, cursor });
}

function requestSeek(cursor: number): void {
  if (seekInFlight || replayInFlight) {
    seekWanted = cursor;
    return;
  }
  seekInFlight = true;
  send({ type: 'seek', cursor });
}

worker.onmessage = (event: MessageEvent<FromWorker>) => {
  const m = event.data;
  if (m.type === 'progress') {
    useSession.setState({ progress: m.fraction });
    return;
  }
  if (m.type === 'result') {
    // For benchmarks: when the worker's answer reached the page (the rest is the page's own work).
    performance.mark('splitscope:replay-result');
    replayInFlight = false;
    useSession.setState({ summary: m.summary, timeline: m.timeline, view: m.view, cursor: m.view.cursor, progress: null });
  } else if (m.type === 'opened') {
    if (replayAfterOpen) replayNewSource();
    replayAfterOpen = false;
  } else if (m.type === 'cursor') {
    seekInFlight = false;
    useSession.setState({ view: m.view });
  } else if (m.type === 'frames') {
    for (const resolve of frameWaiters.get(m.id) ?? []) resolve(m.frames);
    frameWaiters.delete(m.id);
  } else if (m.type === 'export') exportWaiters.shift()?.resolve(m.bytes);
  else if (m.type === 'stream') streamWaiters.shift()?.resolve(m.stream);
  else if (m.type === 'error' && m.stream) streamWaiters.shift()?.reject(new Error(m.message));
  else if (m.type === 'error' && m.export) exportWaiters.shift()?.reject(new Error(m.message));
  else if (m.type === 'compared' || m.type === 'compareCursor' || (m.type === 'error' && m.compare)) {
    for (const listener of replyListeners) listener(m);
  } else if (m.type === 'error') {
    // Whatever was in flight failed: the previous view stays.
    replayInFlight = false;
    seekInFlight = false;
    const message = replayAfterOpen ? `${opening}: ${m.message}` : m.message;
    replayAfterOpen = false;
    openingAs = null;
    useSession.setState({ error: message, progress: null });
  }
  if (replayWanted && !replayInFlight) {
    const next = replayWanted;
    replayWanted = null;
    requestReplay(next.settings, next.cursor);
  } else if (seekWanted !== null && !seekInFlight && !replayInFlight) {
    const next = seekWanted;
    seekWanted = null;
    if (next !== useSession.getState().view?.cursor) requestSeek(next);
  }
  if (--pending === 0) {
    useSession.setState({ busy: false });
    settle?.();
  }
};

/** Resolves when every request sent so far has been answered. */
export function whenIdle(): Promise<void> {
  return idle;
}

/** The source's request stream (built by the worker on its first replay). */
export function sourceStream(): Promise<RequestStream> {
  return new Promise((resolve, reject) => {
    streamWaiters.push({ resolve, reject });
    send({ type: 'stream' });
  });
}

/** The last replay as a PyTorch snapshot file. */
export function exportRun(format: 'pickle' | 'json'): Promise<Uint8Array<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    exportWaiters.push({ resolve, reject });
    send({ type: 'export', format });
  });
}

/** Stack frames of an allocation, by logical id (empty when the source has none). */
export function allocationFrames(id: number): Promise<string[]> {
  return new Promise((resolve) => {
    const waiting = frameWaiters.get(id);
    if (waiting) waiting.push(resolve);
    else {
      frameWaiters.set(id, [resolve]);
      send({ type: 'frames', id });
    }
  });
}

/**
 * A new source replays under the config typed (if any) with no cap, as the CLI does after an import,
 * or under what its share link says.
 */
function replayNewSource(): void {
  const at = openingAs?.at;
  const settings = at?.settings ?? { conf: useSession.getState().settings.conf, capacityBytes: null };
  // Zoom and pin belong to a source; the open panels stay as they are, unless a link says otherwise.
  const look = at?.look ?? { ...DEFAULT_LOOK, panels: useSession.getState().look.panels };
  useSession.setState({ settings, playing: false, sourceLink: openingAs?.link ?? null, look });
  openingAs = null;
  requestReplay(settings, at?.cursor ?? null);
}

async function open(name: string, bytes: ArrayBuffer, link: LinkSource, at: OpenAt | undefined): Promise<void> {
  useSession.setState({ error: null, progress: 0 });
  replayAfterOpen = true;
  opening = name;
  openingAs = { link, at };
  send({ type: 'open', name, bytes }, [bytes]);
}

/** A share link named a file it could not carry: when a file with this hash opens, it opens so. */
let awaitedFile: { sha256: string; at: OpenAt } | null = null;

export function awaitFile(sha256: string, at: OpenAt): void {
  awaitedFile = { sha256, at };
}

/** A file's link: its name and hash, and the file itself when small enough to travel in the link. */
async function fileLink(name: string, bytes: ArrayBuffer): Promise<LinkSource> {
  const hash = await sha256Hex(bytes);
  return bytes.byteLength <= MAX_EMBEDDED_FILE_BYTES
    ? { kind: 'file', name, sha256: hash, data: toBase64Url(new Uint8Array(bytes)) }
    : { kind: 'file', name, sha256: hash };
}

export const useSession = create<SessionState>()((set, get) => ({
  busy: false,
  progress: null,
  error: null,
  settings: { conf: null, capacityBytes: null },
  confError: null,
  summary: null,
  timeline: null,
  cursor: 0,
  view: null,
  playing: false,
  sourceLink: null,
  look: DEFAULT_LOOK,
  setZoom(zoom) {
    set({ look: { ...get().look, zoom } });
  },
  setPinned(pinned) {
    set({ look: { ...get().look, pinned } });
  },
  setPanelOpen(panel, open) {
    const panels = get().look.panels.filter((p) => p !== panel);
    set({ look: { ...get().look, panels: open ? [...panels, panel].sort() : panels } });
  },
  setConf(text) {
    try {
      parseAllocConf(text);
    } catch (e) {
      set({ confError: e instanceof ConfigError ? e.message : String(e) });
      return;
    }
    const settings = { ...get().settings, conf: text };
    set({ settings, confError: null });
    requestReplay(settings, null);
  },
  setMaxSplit(mb) {
    // From the config last asked for, so that quick steps of the slider build on each other.
    const current = get().settings.conf ?? get().summary?.conf ?? '';
    const config = parseAllocConf(current).config;
    const conf = configToString({ ...config, maxSplitSize: mb === null ? Infinity : mb * MiB });
    const settings = { ...get().settings, conf };
    set({ settings, confError: null });
    requestReplay(settings, get().playing ? get().cursor : null);
  },
  setCapacity(bytes) {
    const settings = { ...get().settings, capacityBytes: bytes };
    set({ settings });
    requestReplay(settings, null);
  },
  setDevice(device) {
    const settings = { ...get().settings, device };
    set({ settings });
    requestReplay(settings, null);
  },
  setActions(emptyCacheAfter, resetPeakAfter) {
    const sorted = (a: number[]): number[] => [...new Set(a)].sort((x, y) => x - y);
    const { emptyCacheAfter: _e, resetPeakAfter: _r, ...rest } = get().settings;
    const settings = {
      ...rest,
      ...(emptyCacheAfter.length ? { emptyCacheAfter: sorted(emptyCacheAfter) } : {}),
      ...(resetPeakAfter.length ? { resetPeakAfter: sorted(resetPeakAfter) } : {}),
    };
    set({ settings });
    // The cursor stays: the user sees the call's effect where they made it.
    requestReplay(settings, get().cursor);
  },
  seek(cursor) {
    const total = get().summary?.requests ?? 0;
    const c = Math.max(0, Math.min(total - 1, Math.round(cursor)));
    if (c === get().cursor && get().view?.cursor === c) return;
    set({ cursor: c });
    requestSeek(c);
  },
  setPlaying(playing) {
    set({ playing });
    if (playing) play();
  },
  async openFile(file, at) {
    if (file.size > MAX_FILE_BYTES) {
      set({ error: `${file.name} is ${(file.size / 2 ** 30).toFixed(1)} GiB: too large to open here (limit 1.5 GiB).` });
      return;
    }
    await get().openBytes(file.name, await file.arrayBuffer(), at);
  },
  async openBytes(name, bytes, at) {
    const link = await fileLink(name, bytes);
    // The file a share link asked for: it opens as the link says.
    const awaited = awaitedFile && link.kind === 'file' && link.sha256 === awaitedFile.sha256 ? awaitedFile.at : undefined;
    if (awaited) awaitedFile = null;
    await open(name, bytes, link, at ?? awaited);
  },
  async openSample(at) {
    const response = await fetch(SAMPLE_URL);
    if (!response.ok) {
      set({ error: `The built-in sample could not be loaded (${response.status}).` });
      return;
    }
    await open(SAMPLE_NAME, await response.arrayBuffer(), { kind: 'sample' }, at);
  },
  dismissError() {
    set({ error: null });
  },
  openWorkload(id, params = {}, at) {
    set({ error: null });
    replayAfterOpen = true;
    opening = id;
    openingAs = { link: { kind: 'workload', id, params }, at };
    send({ type: 'workload', id, params });
  },
}));

/** Advances the cursor while playing: about 20 seconds end to end, never ahead of the view. */
function play(): void {
  const tick = (): void => {
    const s = useSession.getState();
    if (!s.playing) return;
    const total = s.summary?.requests ?? 0;
    if (s.cursor >= total - 1) {
      useSession.setState({ playing: false });
      return;
    }
    if (!seekInFlight && !replayInFlight) s.seek(s.cursor + Math.max(1, Math.round(total / 1200)));
    requestAnimationFrame(tick);
  };
  if (useSession.getState().cursor >= (useSession.getState().summary?.requests ?? 0) - 1) useSession.getState().seek(0);
  requestAnimationFrame(tick);
}
