// What the page shows: the source (a built-in workload or a snapshot), the settings it replays
// under, the latest replay of one under the other, and the cursor with the state after it.
import { create } from 'zustand';
import { MiB } from '../allocator/constants';
import { configToString } from '../allocator/config';
import { ConfigError } from '../allocator/config-error';
import { parseAllocConf } from '../allocator/config-parser';
import { AsyncLimiter } from '../lib/async-limiter';
import { framesDrawn } from '../lib/frame-scheduler';
import { sha256Hex } from '../lib/sha256';
import { clearTimings, mark, measure } from '../lib/timing';
import type { RequestStream } from '../trace/stream/request-stream';
import type { TimelineAnnotation } from '../trace/measures/timeline-annotations';
import { WORKLOADS } from '../trace/stream/workloads';
import type { CursorView, ReplaySummary, ReplayTimeline } from '../worker/replay-protocol';
import type { ReplaySettings } from '../worker/replay-settings';
import { toBase64Url } from './link-codec';
import { hashFile } from './hash-client';
import { DEFAULT_LOOK, MAX_EMBEDDED_FILE_BYTES, type LinkSource, type MapZoom, type PanelId, type ViewLook } from './link-schema';
import { callWorker, callback, moved, onWorkerBusy, workerBusy, workerIdle } from './replay-client';

/** Settings and cursor a source opens with (a share link's), instead of its own and the end. */
export interface OpenAt {
  settings: ReplaySettings;
  cursor: number | null;
  /** How the view looks: the segment map's zoom and pinned allocation, the open panels. */
  look?: ViewLook;
}

export const SAMPLE_URL = `${import.meta.env.BASE_URL}samples/train_gpt2-n12.pickle.gz`;
export const SAMPLE_NAME = 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)';
export const DEFAULT_WORKLOAD = WORKLOADS[0]!.id;
/** Files larger than this are refused before reading them into memory. */
const MAX_FILE_BYTES = 1.5 * 2 ** 30;

/** Why `file` is refused before it is read (too large), or null. */
export function tooLargeToOpen(file: File): string | null {
  return file.size > MAX_FILE_BYTES ? `${file.name} is ${(file.size / 2 ** 30).toFixed(1)} GiB: too large to open here (limit 1.5 GiB).` : null;
}

interface SessionState {
  busy: boolean;
  /** A new source is being read and replayed: the sweep and the guide of the current one stop (they
   * would compete with it for the cores), and start again for whichever source the view then shows. */
  opening: boolean;
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
  /** The source as a share link names it; null until known (a file's hash comes after its first view). */
  sourceLink: LinkSource | null;
  /** Which source this is: a new one for each source opened (what sweeps and comparisons key on). */
  sourceId: number;
  /** For the timeline, once fetched for the source and device: whether the trace has times, the
   * program's annotations, and each request's time once the timeline is drawn over time. */
  axis: { key: string; timed: boolean; annotations: TimelineAnnotation[]; time: Float64Array | null } | null;
  /** Fetches each request's time (the timeline over time_us asks for it). */
  loadRequestTimes(): Promise<void>;
  look: ViewLook;
  setZoom(zoom: MapZoom | null): void;
  setPinned(id: number | null): void;
  setPanelOpen(panel: PanelId, open: boolean): void;
  setConf(text: string): void;
  /** max_split_size_mb from the slider (null: unlimited), applied to the current config. */
  setMaxSplit(mb: number | null): void;
  setCapacity(bytes: number | null): void;
  /** The device whose trace replays (a snapshot of several GPUs); the config applies to every device. */
  setDevice(device: number): void;
  /** Inserted calls: empty_cache() and reset_peak_memory_stats() after these requests. */
  setInsertedCalls(calls: { emptyCacheAfter: number[]; resetPeakAfter: number[] }): void;
  seek(cursor: number): void;
  setPlaying(playing: boolean): void;
  openFile(file: File, at?: OpenAt): Promise<void>;
  openBytes(name: string, bytes: ArrayBuffer, at?: OpenAt): Promise<void>;
  openSample(at?: OpenAt): Promise<void>;
  openWorkload(id: string, params?: Record<string, number>, at?: OpenAt): void;
  dismissError(): void;
}

/** Replays and seeks coalesce: one in flight, and only the latest asked for after it (a dragged
 * slider never queues a backlog). A seek waits for the replay before it. */
const replays = new AsyncLimiter();
const seeks = new AsyncLimiter();
/** The source being opened, once it opened: the first replay's error names it. */
let openedName: string | null = null;

onWorkerBusy((busy) => useSession.setState({ busy }));

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Where a config change leaves the cursor: where it is, so that the user sees the moment they were
 * looking at under the new config (the worker takes that state in the same pass as the whole
 * replay); the last request while nothing (or another source) is shown.
 */
function shownCursor(): number | null {
  const { view, cursor, opening } = useSession.getState();
  return view && !opening ? cursor : null;
}

function requestReplay(settings: ReplaySettings, cursor: number | null): void {
  const { sourceId } = useSession.getState();
  void replays.schedule(async () => {
    const named = openedName;
    openedName = null;
    try {
      const { summary, timeline, view } = await callWorker((w) => w.replay(settings, cursor));
      // A source opened meanwhile (a file chosen while the built-in workload replayed): its replay
      // comes next, and this one's answer is not shown under it.
      if (useSession.getState().sourceId !== sourceId) return;
      // For benchmarks: when the worker's answer reached the page (the rest is the page's own work).
      mark('splitscope:replay-result');
      useSession.setState({ summary, timeline, view, cursor: view.cursor, progress: null, opening: false });
      void requestAxis();
    } catch (e) {
      if (useSession.getState().sourceId !== sourceId) return;
      // The previous view stays.
      useSession.setState({ error: named ? `${named}: ${message(e)}` : message(e), progress: null, opening: false });
    }
  });
}

function requestSeek(cursor: number): void {
  void seeks.schedule(async () => {
    await replays.idle();
    // Not while a source opens: the worker holds the new source before the page does, and would
    // answer with its state under the old source's figures (its first replay sets the cursor).
    const { opening, view: shown } = useSession.getState();
    if (opening || cursor === shown?.cursor) return;
    try {
      const view = await callWorker((w) => w.seek(cursor));
      const answered = performance.now();
      mark('splitscope:seek-result');
      useSession.setState({ view });
      // For benchmarks: the render this state change caused (React flushes it in a microtask queued before this one).
      queueMicrotask(() => measure('splitscope:seek-render', answered));
    } catch (e) {
      useSession.setState({ error: message(e) });
    }
  });
}

const axisKey = (): string => `${useSession.getState().sourceId}/${useSession.getState().summary?.device}`;

/** The key of the last time axis asked for (one request per source and device, however many replays). */
let axisAsked = '';

/** The request times and annotations of the source and device on screen, when not yet fetched. */
async function requestAxis(): Promise<void> {
  const { summary } = useSession.getState();
  if (!summary) return;
  const key = axisKey();
  if (axisAsked === key) return;
  axisAsked = key;
  try {
    const axis = await callWorker((w) => w.timeAxis());
    if (axisKey() === key) useSession.setState({ axis: { key, ...axis, time: null } });
  } catch {
    // The timeline stays over requests alone.
  }
}

/** Resolves when every call to the worker has been answered and no replay or seek waits to be sent. */
export async function whenIdle(): Promise<void> {
  while (workerBusy() || replays.busy || seeks.busy || hashing) await Promise.all([workerIdle(), replays.idle(), seeks.idle(), hashing]);
}

/** The last stream asked for, by the source and device it belongs to. */
let streamCache: { sourceId: number; device: number; stream: Promise<RequestStream> } | null = null;

/**
 * The source's request stream (built by the worker on its first replay). One object per source and
 * device: the sweep pool sends a stream to its workers once, by identity.
 */
export function sourceStream(): Promise<RequestStream> {
  const { sourceId, settings } = useSession.getState();
  const device = settings.device ?? 0;
  if (streamCache && streamCache.sourceId === sourceId && streamCache.device === device) return streamCache.stream;
  const stream = callWorker((w) => w.stream());
  streamCache = { sourceId, device, stream };
  stream.catch(() => (streamCache = null));
  return stream;
}

/** The last replay as a PyTorch snapshot file. */
export function exportRun(format: 'pickle' | 'json'): Promise<Uint8Array<ArrayBuffer>> {
  return callWorker((w) => w.exportRun(format));
}

const framesAsked = new Map<number, Promise<string[]>>();

/** Stack frames of an allocation, by logical id (empty when the source has none). */
export function allocationFrames(id: number): Promise<string[]> {
  let asked = framesAsked.get(id);
  if (!asked) {
    asked = callWorker((w) => w.frames(id)).finally(() => framesAsked.delete(id));
    framesAsked.set(id, asked);
  }
  return asked;
}

/**
 * A new source replays under the config typed (if any) with no cap, as the CLI does after an import,
 * or under what its share link says.
 */
/** A file's hash on its way (whenIdle waits for it: the share link needs it), and its stop. */
let hashing: Promise<void> | null = null;
let stopHashing: AbortController | null = null;

function replayNewSource(name: string, link: LinkSource | null, at: OpenAt | undefined): number {
  // The last file's hash, if still running, is of no use now and would take a core from this source.
  stopHashing?.abort();
  const settings = at?.settings ?? { conf: useSession.getState().settings.conf, capacityBytes: null };
  // Zoom and pin belong to a source; the open panels stay as they are, unless a link says otherwise.
  const look = at?.look ?? { ...DEFAULT_LOOK, panels: useSession.getState().look.panels };
  // The same source opened again (Back and Forward reopen what the link names) keeps its id.
  const { sourceId: last, sourceLink: lastLink } = useSession.getState();
  const sourceId = link && lastLink && JSON.stringify(link) === JSON.stringify(lastLink) ? last : last + 1;
  useSession.setState({ settings, playing: false, sourceLink: link, sourceId, look });
  openedName = name;
  requestReplay(settings, at?.cursor ?? null);
  return sourceId;
}

/**
 * Opens a source in the worker (`start`), then replays it; a source that fails to open changes nothing.
 * Its link and where it opens are known once it opened.
 */
async function openSource(name: string, start: () => Promise<string>, link: () => LinkSource | null, at: () => OpenAt | undefined): Promise<number | null> {
  // The source on screen stops playing: its seeks and frames took both cores from the open (random-s3,
  // 46 MB, opened while the built-in workload played: 0.75-1.2 s to the first view; stopped: 0.5 s).
  useSession.setState({ opening: true, playing: false });
  try {
    await start();
  } catch (e) {
    useSession.setState({ error: `${name}: ${message(e)}`, progress: null, opening: false });
    return null;
  }
  return replayNewSource(name, link(), at()); // its replay ends `opening`
}


/**
 * Opens a file or bytes in the worker, which reads them; hashes them (bytes here, a File in the hash
 * worker after its first view); `linkOf` makes the source's link from the SHA-256 (a share link that
 * waits for a file with that hash then says how it opens).
 */
async function open(name: string, data: Blob | ArrayBuffer, linkOf: (sha256: string) => LinkSource, at: OpenAt | undefined): Promise<void> {
  useSession.setState({ error: null, progress: 0 });
  let opened = false;
  const onProgress = callback((fraction: number) => {
    if (!opened) useSession.setState({ progress: fraction });
  });
  let link: LinkSource | null = null;
  /** What the awaited file's link does once the file is open (its search and stack selection). */
  let whenOpened: (() => void) | undefined;
  // Bytes are moved to the worker, so hashed first (they are small: an embedded file, the sample).
  const bytesHash = data instanceof Blob ? null : sha256Hex(new Uint8Array(data));
  const id = await openSource(
    name,
    async () => {
      try {
        await callWorker((w) => w.open(name, data instanceof Blob ? data : moved(data, [data]), onProgress));
        // The file a share link asked for opens as the link says: its hash is needed before the replay.
        if (bytesHash !== null || (!at && awaitedFile)) {
          const sha256 = bytesHash ?? (await hashFile(data as Blob));
          link = linkOf(sha256);
          if (!at && awaitedFile?.sha256 === sha256) {
            at = awaitedFile.at;
            whenOpened = awaitedFile.opened;
            awaitedFile = null;
          }
        }
        return name;
      } finally {
        opened = true;
        mark('splitscope:opened');
      }
    },
    () => link,
    () => at,
  );
  if (id !== null) whenOpened?.();
  if (id === null || link) return;
  // A File: the view first, then its hash (in the hash worker, once the view is drawn: ~130 MB/s,
  // which would take a core from the parse), then the link (unless another source came meanwhile).
  const current = (): boolean => useSession.getState().sourceId === id;
  const stop = new AbortController();
  stopHashing = stop;
  const done: Promise<void> = (async () => {
    await replays.idle();
    await framesDrawn();
    if (!current() || stop.signal.aborted) return;
    try {
      const sha256 = await hashFile(data as Blob, stop.signal);
      mark('splitscope:hashed'); // for benchmarks
      if (current()) useSession.setState({ sourceLink: linkOf(sha256) });
    } catch (e) {
      if (current() && !stop.signal.aborted) useSession.setState({ error: `${name}: ${message(e)} (its share link names it by hash)` });
    }
  })().finally(() => {
    if (hashing === done) hashing = null;
  });
  hashing = done;
}

/** A share link named a file it could not carry: when a file with this hash opens, it opens so, and
 * `opened` runs once it is open. */
let awaitedFile: { sha256: string; at: OpenAt; opened?: () => void } | null = null;

export function awaitFile(sha256: string, at: OpenAt, opened?: () => void): void {
  awaitedFile = { sha256, at, ...(opened ? { opened } : {}) };
}

/** A file's link: its name and hash, and the file itself when small enough to travel in the link
 * (`bytes`: then read on the page, before they go to the worker). */
function fileLink(name: string, sha256: string, bytes?: ArrayBuffer): LinkSource {
  return bytes && bytes.byteLength <= MAX_EMBEDDED_FILE_BYTES
    ? { kind: 'file', name, sha256, data: toBase64Url(new Uint8Array(bytes)) }
    : { kind: 'file', name, sha256 };
}

export const useSession = create<SessionState>()((set, get) => ({
  busy: false,
  opening: false,
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
  sourceId: 0,
  axis: null,
  async loadRequestTimes() {
    const axis = get().axis;
    if (!axis?.timed || axis.time) return;
    try {
      const time = await callWorker((w) => w.requestTimes());
      if (get().axis?.key === axis.key) set({ axis: { ...get().axis!, time } });
    } catch (e) {
      set({ error: message(e) });
    }
  },
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
    requestReplay(settings, shownCursor());
  },
  setMaxSplit(mb) {
    // From the config last asked for, so that quick steps of the slider build on each other.
    const current = get().settings.conf ?? get().summary?.conf ?? '';
    const config = parseAllocConf(current).config;
    const conf = configToString({ ...config, maxSplitSize: mb === null ? Infinity : mb * MiB });
    const settings = { ...get().settings, conf };
    set({ settings, confError: null });
    requestReplay(settings, shownCursor());
  },
  setCapacity(bytes) {
    const settings = { ...get().settings, capacityBytes: bytes };
    set({ settings });
    requestReplay(settings, shownCursor());
  },
  setDevice(device) {
    const settings = { ...get().settings, device };
    set({ settings });
    requestReplay(settings, null);
  },
  setInsertedCalls({ emptyCacheAfter, resetPeakAfter }) {
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
    // For benchmarks: the moment a file was chosen (its open ends at 'splitscope:replay-result' and the next frames).
    clearTimings();
    mark('splitscope:open-start');
    const refused = tooLargeToOpen(file);
    if (refused) {
      set({ error: refused });
      return;
    }
    // A small file travels in the share link, so the page reads it; a larger one the worker reads.
    if (file.size <= MAX_EMBEDDED_FILE_BYTES) await get().openBytes(file.name, await file.arrayBuffer(), at);
    else await open(file.name, file, (sha256) => fileLink(file.name, sha256), at);
  },
  async openBytes(name, bytes, at) {
    const kept = bytes.byteLength <= MAX_EMBEDDED_FILE_BYTES ? bytes.slice(0) : undefined;
    await open(name, bytes, (sha256) => fileLink(name, sha256, kept), at);
  },
  async openSample(at) {
    const response = await fetch(SAMPLE_URL);
    if (!response.ok) {
      set({ error: `The built-in sample could not be loaded (${response.status}).` });
      return;
    }
    await open(SAMPLE_NAME, await response.arrayBuffer(), () => ({ kind: 'sample' }), at);
  },
  dismissError() {
    set({ error: null });
  },
  openWorkload(id, params = {}, at) {
    set({ error: null });
    void openSource(id, () => callWorker((w) => w.workload(id, params)), () => ({ kind: 'workload', id, params }), () => at);
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
    if (!replays.busy && !seeks.busy) s.seek(s.cursor + Math.max(1, Math.round(total / 1200)));
    requestAnimationFrame(tick);
  };
  if (useSession.getState().cursor >= (useSession.getState().summary?.requests ?? 0) - 1) useSession.getState().seek(0);
  requestAnimationFrame(tick);
}
