// What the page shows: the source (a built-in workload or a snapshot), the settings it replays
// under, the latest replay of one under the other, and the cursor with the state after it. The
// source and the settings make the view key (view-key.ts); the replay and the view carry the key they
// were computed for, and a panel shows them only while that key is the current one.
import { useMemo } from 'react';
import { create } from 'zustand';
import { MiB } from '../allocator/constants';
import { configToString } from '../allocator/config';
import { configRefusal, parseAllocConf } from '../allocator/config-parser';
import { AsyncLimiter } from '../lib/async-limiter';
import { framesDrawn } from '../lib/frame-scheduler';
import { sha256Hex } from '../lib/sha256';
import { clearTimings, mark, measure } from '../lib/timing';
import type { RequestStream } from '../trace/stream/request-stream';
import { WORKLOADS } from '../trace/stream/workloads';
import type { CursorView, ReplaySummary, ReplayTimeline } from '../worker/replay-protocol';
import type { ReplaySettings, SourceKey, ViewKey } from '../worker/replay-settings';
import { derived, forgetOtherSources, isSuperseded } from './derived';
import { toBase64Url } from './link-codec';
import { hashFile } from './hash-client';
import { DEFAULT_LOOK, MAX_EMBEDDED_FILE_BYTES, type LinkFile, type LinkSource, type MapZoom, type PanelId, type ViewLook } from './link-schema';
import { callWorker, callback, moved, onWorkerBusy, workerBusy, workerIdle } from './replay-client';
import { keyFromId, keyId, keyOf, sourceKeyOf, sourceParts } from './view-key';

/** Settings and cursor a source opens with (a share link's, a fleet row's), instead of its own and the first OOM or the end. */
export interface OpenAt {
  settings: ReplaySettings;
  /** null: the last request; 'runFirstOom': the first OOM of the run under `settings` (a fleet row's
   * config fails where the run does, not where the recording did), else the recording's, else the last. */
  cursor: number | null | 'runFirstOom';
  /** How the view looks: the segment map's zoom and pinned allocation, the open panels. */
  look?: ViewLook;
  /** Configs compared side by side (the link's comparison). */
  compare?: string[] | null;
}

export const SAMPLE_URL = `${import.meta.env.BASE_URL}samples/train_gpt2-n12.pickle.gz`;
export const SAMPLE_NAME = 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)';
export const DEFAULT_WORKLOAD = WORKLOADS[0]!.id;
/** Files larger than this are refused before reading them into memory. */
const MAX_FILE_BYTES = 1.5 * 2 ** 30;
/** The settings a source brings: its own config, its own cap (none, or the one its recording shows). */
export const AS_RECORDED: ReplaySettings = { conf: null, capacityBytes: null };

/** Why `file` is refused before it is read (too large), or null. */
export function tooLargeToOpen(file: File): string | null {
  return file.size > MAX_FILE_BYTES ? `${file.name} is ${(file.size / 2 ** 30).toFixed(1)} GiB: too large to open here (limit 1.5 GiB).` : null;
}

/** What a share link waits for, and how far a file chosen for it got. */
export interface Awaiting {
  name: string;
  /** The file's size in bytes, where the link says (links from before it did not). */
  size?: number;
  prediction?: boolean;
  /** A file chosen for it, being hashed to check it is the link's. */
  checking?: string;
  /** A file chosen for it that is not the link's: nothing opens until the user says how (`openChosenInstead`). */
  chosenInstead?: File;
}

interface SessionState {
  busy: boolean;
  /** A new source is being read and replayed. */
  opening: boolean;
  progress: number | null;
  /** The last import or replay error; the previous result stays on screen. */
  error: string | null;
  /** The settings asked for (the view key's); the replay on screen may still be catching up. */
  settings: ReplaySettings;
  confError: string | null;
  /** The replay on screen and the key it was made for (`summary.key`). */
  summary: ReplaySummary | null;
  timeline: ReplayTimeline | null;
  /** The cursor as the user set it (the view may still be catching up). */
  cursor: number;
  /** The state at the cursor, and the key it was made for (`view.key`). */
  view: CursorView | null;
  playing: boolean;
  /** The source as a share link names it; null until known (a file's hash comes after its first view). */
  sourceLink: LinkSource | null;
  /** Which source this is: a new one for each source opened (the view key's source). */
  sourceId: number;
  /** A source opened as recorded while the last one ran under other settings: those, to apply again if wanted. */
  carried: { from: string; settings: ReplaySettings } | null;
  /** A share link names a file too large to travel in it (or a prediction's recordings): nothing is shown until it is opened. */
  awaiting: Awaiting | null;
  /** Configs compared side by side over the source (the comparison is open), '' for the defaults. */
  compare: string[] | null;
  look: ViewLook;
  setZoom(zoom: MapZoom | null): void;
  setPinned(id: number | null): void;
  setPanelOpen(panel: PanelId, open: boolean): void;
  setConf(text: string): void;
  /** max_split_size_mb from the slider (null: unlimited), applied to the current config. */
  setMaxSplit(mb: number | null): void;
  setCapacity(bytes: number | null): void;
  /** Config and cap at once (the source's own: AS_RECORDED; the last source's: `carried`). */
  applySettings(settings: Pick<ReplaySettings, 'conf' | 'capacityBytes'>): void;
  /** The device whose trace replays (a snapshot of several GPUs); the config applies to every device. */
  setDevice(device: number): void;
  /** Inserted calls: empty_cache() and reset_peak_memory_stats() after these requests. */
  setInsertedCalls(calls: { emptyCacheAfter: number[]; resetPeakAfter: number[] }): void;
  setCompare(confs: string[] | null): void;
  seek(cursor: number): void;
  setPlaying(playing: boolean): void;
  openFile(file: File, at?: OpenAt): Promise<void>;
  /** A file the user chose (a button, a drop): while a link waits for its file, it is checked first:
   * the link's opens as the link says, another waits for the user's word (`awaiting.chosenInstead`). */
  chooseFile(file: File): Promise<void>;
  /** The file chosen instead of the link's opens under the link's settings, or as recorded. */
  openChosenInstead(how: 'link' | 'recorded'): Promise<void>;
  openBytes(name: string, bytes: ArrayBuffer, at?: OpenAt): Promise<void>;
  openSample(at?: OpenAt): Promise<void>;
  openWorkload(id: string, params?: Record<string, number>, at?: OpenAt): void;
  /** A predicted run: recordings of one program at two sizes or more (each with the size it ran at), at `size`. */
  openPrediction(recordings: { name: string; size: number; data: Blob | ArrayBuffer }[], size: number, at?: OpenAt): Promise<void>;
  /** A prediction's size (a batch, a sequence length). */
  setSize(size: number): void;
  dismissError(): void;
  dismissCarried(): void;
}

/** Replays and seeks coalesce: one in flight, and only the latest asked for after it (a dragged
 * slider never queues a backlog). A seek waits for the replay before it. */
const replays = new AsyncLimiter();
const seeks = new AsyncLimiter();

onWorkerBusy((busy) => useSession.setState({ busy }));

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The key on screen now: the source shown (or being opened) under the settings asked for. */
export function currentKey(): ViewKey {
  const { sourceId, settings } = useSession.getState();
  return keyOf(sourceId, settings);
}

/** The current key in a component; one object per key, so that it can sit in dependency lists. */
export function useViewKey(): ViewKey {
  return keyById(useSession((s) => keyId(keyOf(s.sourceId, s.settings))));
}

/** The source and device on screen in a component (what a search, the event list and the time axis
 * depend on): a config change does not render it again. */
export function useSourceKey(): SourceKey {
  const source = useSession((s) => s.sourceId);
  const device = useSession((s) => s.settings.device ?? 0);
  const size = useSession((s) => s.settings.size);
  return useMemo(() => ({ source, ...(device ? { device } : {}), ...(size !== undefined ? { size } : {}) }), [source, device, size]);
}

const keys = new Map<string, ViewKey>();
function keyById(id: string): ViewKey {
  let key = keys.get(id);
  if (!key) {
    key = keyFromId(id);
    if (keys.size > 64) keys.clear();
    keys.set(id, key);
  }
  return key;
}

/** Whether the replay on screen is the current key's. */
export function replayIsCurrent(): boolean {
  const s = useSession.getState();
  return s.summary !== null && keyId(s.summary.key) === keyId(keyOf(s.sourceId, s.settings));
}

/**
 * The first replay on screen that `match` accepts (derived results wait for one: they read the config
 * and cap it resolved); rejects when `signal` aborts (no panel asks for the result any more).
 */
export function replayed(match: (summary: ReplaySummary) => boolean, signal: AbortSignal): Promise<ReplaySummary> {
  return new Promise((resolve, reject) => {
    let unsubscribe = (): void => {};
    const onAbort = (): void => {
      unsubscribe();
      reject(signal.reason ?? new DOMException('The view moved on.', 'AbortError'));
    };
    const check = (): boolean => {
      const { summary } = useSession.getState();
      if (!summary || !match(summary)) return false;
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      resolve(summary);
      return true;
    };
    if (signal.aborted) return onAbort();
    if (check()) return;
    unsubscribe = useSession.subscribe(check);
    signal.addEventListener('abort', onAbort);
  });
}

/** The replay of exactly `key`, once on screen. */
export const replayedKey = (key: ViewKey, signal: AbortSignal): Promise<ReplaySummary> => {
  const id = keyId(key);
  return replayed((s) => keyId(s.key) === id, signal);
};

/**
 * Replays `key` with the cursor at `cursor` (null: the last request; 'firstOom': the recording's first
 * OOM, or the last request; 'runFirstOom': this run's first OOM, known once it ran, else as 'firstOom').
 * A replay that fails leaves the view as it was and takes the settings back to those on screen, so
 * that the share link carries only what was applied; on a source's first replay (a link's settings
 * refused) the source opens as recorded and says what it could not apply.
 */
function requestReplay(key: ViewKey, cursor: number | null | 'firstOom' | 'runFirstOom', named: string | null = null, followOom = false): void {
  void replays.schedule(async () => {
    // The run on screen before: a change that makes the run fail (or fail elsewhere) goes to its first OOM.
    const before = useSession.getState().summary;
    try {
      // The worker places the view before the run: at the recording's OOM, where the run's often is too.
      const { summary, timeline, view } = await callWorker((w) => w.replay(key, cursor === 'runFirstOom' ? 'firstOom' : cursor));
      // A source opened meanwhile (a file chosen while the built-in workload replayed): its replay
      // comes next, and this one's answer is not shown under it.
      if (useSession.getState().sourceId !== key.source) return;
      // For benchmarks: when the worker's answer reached the page (the rest is the page's own work).
      mark('splitscope:replay-result');
      useSession.setState({ summary, timeline, view, cursor: view.cursor, progress: null, opening: false });
      const ranOutAt = summary.ooms[0]?.request;
      if (cursor === 'runFirstOom' && ranOutAt !== undefined && view.cursor !== ranOutAt) useSession.getState().seek(ranOutAt);
      if (followOom) {
        const first = summary.ooms[0]?.request;
        const had = before && before.key.source === key.source ? (before.ooms[0]?.request ?? null) : null;
        // Where the eye is: the cursor at the new first OOM, the OOM box in view (as a dump opens).
        if (first !== undefined && first !== had && view.cursor !== first) useSession.getState().seek(first);
      }
    } catch (e) {
      const s = useSession.getState();
      if (s.sourceId !== key.source || isSuperseded(e)) return;
      const shown = s.summary && s.summary.key.source === key.source ? s.summary.key : null;
      const what = `${named ? `${named}: ` : ''}${message(e)}`;
      if (shown) {
        // The view stays, and the settings go back to the ones it shows.
        const { source: _s, ...settings } = shown;
        useSession.setState({ error: `${what} The view stays under the settings it shows.`, settings, progress: null, opening: false });
      } else if (keyId(key) !== keyId(keyOf(key.source, AS_RECORDED))) {
        useSession.setState({ error: `${what} It opens as recorded instead.`, settings: AS_RECORDED });
        requestReplay(keyOf(key.source, AS_RECORDED), 'firstOom', named);
      } else {
        useSession.setState({ error: what, progress: null, opening: false });
      }
    }
  });
}

/** Replays the current key, the cursor where it is (the user sees the moment they were looking at);
 * `followOom`: a settings change, after which a run that now fails (or fails at another request) shows its first OOM. */
function replayCurrent(cursor: number | null = shownCursor(), followOom = false): void {
  requestReplay(currentKey(), cursor, null, followOom);
}

/**
 * Where a config change leaves the cursor: where it is, so that the user sees the moment they were
 * looking at under the new config (the worker takes that state in the same pass as the whole
 * replay); the last request while nothing (or another source) is shown.
 */
function shownCursor(): number | null {
  const { view, cursor, opening } = useSession.getState();
  return view && !opening ? cursor : null;
}

function requestSeek(cursor: number): void {
  void seeks.schedule(async () => {
    await replays.idle();
    // Not while a source opens: the worker holds the new source before the page does (its first
    // replay sets the cursor).
    const { opening, view: shown, summary } = useSession.getState();
    if (opening || !summary || cursor === shown?.cursor) return;
    try {
      const view = await callWorker((w) => w.seek(summary.key, cursor));
      const answered = performance.now();
      // A replay that came meanwhile holds its own state at the cursor.
      if (keyId(useSession.getState().summary?.key) !== keyId(view.key)) return;
      mark('splitscope:seek-result');
      useSession.setState({ view });
      // For benchmarks: the render this state change caused (React flushes it in a microtask queued before this one).
      queueMicrotask(() => measure('splitscope:seek-render', answered));
    } catch (e) {
      if (!isSuperseded(e)) useSession.setState({ error: message(e) });
    }
  });
}

/** Resolves when every call to the worker has been answered and no replay or seek waits to be sent. */
export async function whenIdle(): Promise<void> {
  while (workerBusy() || replays.busy || seeks.busy || hashing) await Promise.all([workerIdle(), replays.idle(), seeks.idle(), hashing]);
}

/**
 * The request stream of a source and device (built by the worker on its first replay): one object per
 * source and device, kept as long as the source, since the sweep pool sends a stream to its workers
 * once, by identity.
 */
export function streamOf(key: SourceKey): Promise<RequestStream> {
  return derived.fetchQuery({ queryKey: ['stream', key.source, ...sourceParts(key)], queryFn: () => callWorker((w) => w.stream(key)), gcTime: Infinity });
}

/** The replay on screen as a PyTorch snapshot file. */
export function exportRun(format: 'pickle' | 'json'): Promise<Uint8Array<ArrayBuffer>> {
  const summary = useSession.getState().summary;
  if (!summary) return Promise.reject(new Error('Nothing has been replayed yet: there is nothing to export.'));
  return callWorker((w) => w.exportRun(summary.key, format));
}

/** Stack frames of an allocation of the source on screen, by logical id (empty when the source has none). */
export function allocationFrames(id: number): Promise<string[]> {
  const summary = useSession.getState().summary;
  if (!summary) return Promise.resolve([]);
  const key = sourceKeyOf(summary.key);
  return derived.fetchQuery({ queryKey: ['frames', key.source, ...sourceParts(key), id], queryFn: () => callWorker((w) => w.frames(key, id)), gcTime: 60_000 });
}

/** A file's hash on its way (whenIdle waits for it: the share link needs it), and its stop. */
let hashing: Promise<void> | null = null;
let stopHashing: AbortController | null = null;

/** Ids of the sources opened (a source's id is in every key and every call to the worker). */
let lastId = 0;

/** The id for a source about to open: the same source opened again (Back and Forward reopen what the
 * link names) keeps its id, so that what was derived for it is shown again at once. */
function idFor(link: LinkSource | null): number {
  const { sourceId, sourceLink } = useSession.getState();
  if (link && sourceLink && JSON.stringify(link) === JSON.stringify(sourceLink)) return sourceId;
  return ++lastId;
}

/** What happens to the rest of the page when a new source opens (the comparisons of another recording close). */
const newSourceListeners: ((fromLink: boolean) => void)[] = [];
export function onNewSource(listen: (fromLink: boolean) => void): void {
  newSourceListeners.push(listen);
}

/**
 * A source the worker has opened becomes the view's: as recorded (its own config and cap), unless a
 * share link says otherwise; what belonged to the last source (its config, comparison, inserted calls,
 * zoom) is cleared, and a config the last source ran under is offered to apply again.
 */
function showNewSource(name: string, link: LinkSource | null, at: OpenAt | undefined, id: number, size?: number): void {
  // The last file's hash, if still running, is of no use now and would take a core from this source.
  stopHashing?.abort();
  const before = useSession.getState();
  // A prediction opens at the size asked for (its settings carry it: a size is part of the view key).
  const settings = at?.settings ?? (size !== undefined ? { ...AS_RECORDED, size } : AS_RECORDED);
  const lastSettings = { conf: before.settings.conf, capacityBytes: before.settings.capacityBytes };
  const carried =
    !at && before.summary && id !== before.sourceId && (lastSettings.conf !== null || lastSettings.capacityBytes !== null)
      ? { from: before.summary.source, settings: lastSettings }
      : null;
  // Zoom and pin belong to a source; the open panels stay as they are, unless a link says otherwise.
  const look = at?.look ?? { ...DEFAULT_LOOK, panels: before.look.panels };
  useSession.setState({ settings, playing: false, sourceLink: link, sourceId: id, look, carried, awaiting: null, compare: at?.compare ?? null, confError: null });
  forgetOtherSources(id);
  for (const listen of newSourceListeners) listen(at !== undefined);
  requestReplay(keyOf(id, settings), at ? at.cursor : 'firstOom', name);
}

/**
 * Opens a source in the worker (`start`), then shows it; a source that fails to open changes nothing.
 * Its link and where it opens are known once it opened.
 */
async function openSource(name: string, id: number, start: () => Promise<string>, link: () => LinkSource | null, at: () => OpenAt | undefined, size?: number): Promise<boolean> {
  // The source on screen stops playing: its seeks and frames took both cores from the open (random-s3,
  // 46 MB, opened while the built-in workload played: 0.75-1.2 s to the first view; stopped: 0.5 s).
  useSession.setState({ opening: true, playing: false });
  try {
    await start();
  } catch (e) {
    useSession.setState({ error: `${name}: ${message(e)}`, progress: null, opening: false });
    return false;
  }
  showNewSource(name, link(), at(), id, size); // its replay ends `opening`
  return true;
}

/**
 * Opens a file or bytes in the worker, which reads them; hashes them (bytes here, a File in the hash
 * worker after its first view); `linkOf` makes the source's link from the SHA-256 (a share link that
 * waits for a file with that hash then says how it opens).
 */
async function open(name: string, data: Blob | ArrayBuffer, linkOf: (sha256: string) => LinkSource, at: OpenAt | undefined): Promise<boolean> {
  useSession.setState({ error: null, progress: 0 });
  let opened = false;
  const onProgress = callback((fraction: number) => {
    if (!opened) useSession.setState({ progress: fraction });
  });
  // Bytes are moved to the worker, so hashed first (they are small: an embedded file, the sample).
  const bytesHash = data instanceof Blob ? null : sha256Hex(new Uint8Array(data));
  let link: LinkSource | null = bytesHash !== null ? linkOf(bytesHash) : null;
  const id = idFor(link);
  /** What the awaited file's link does once the file is open (its search and stack selection). */
  let whenOpened: (() => void) | undefined;
  const ok = await openSource(
    name,
    id,
    async () => {
      try {
        await callWorker((w) => w.open(name, data instanceof Blob ? data : moved(data, [data]), onProgress, id));
        // The file a share link asked for opens as the link says: its hash is needed before the replay.
        if (link === null && !at && awaitedFile) {
          const sha256 = await hashFile(data as Blob);
          link = linkOf(sha256);
        }
        if (!at && awaitedFile && link?.kind === 'file' && awaitedFile.sha256 === link.sha256) {
          at = awaitedFile.at;
          whenOpened = awaitedFile.opened;
          awaitedFile = null;
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
  if (ok) whenOpened?.();
  if (!ok || link) return ok;
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
  return true;
}

/** Opens a file (a small one is read here: it travels in the share link; a larger one the worker
 * reads); whether it opened. */
async function openFileAt(file: File, at: OpenAt | undefined): Promise<boolean> {
  // For benchmarks: the moment a file was chosen (its open ends at 'splitscope:replay-result' and the next frames).
  clearTimings();
  mark('splitscope:open-start');
  const refused = tooLargeToOpen(file);
  if (refused) {
    useSession.setState({ error: refused });
    return false;
  }
  if (file.size <= MAX_EMBEDDED_FILE_BYTES) return openBytesAt(file.name, await file.arrayBuffer(), at);
  return open(file.name, file, (sha256) => fileLink(file.name, sha256, file.size), at);
}

function openBytesAt(name: string, bytes: ArrayBuffer, at: OpenAt | undefined): Promise<boolean> {
  const size = bytes.byteLength;
  const kept = size <= MAX_EMBEDDED_FILE_BYTES ? bytes.slice(0) : undefined;
  return open(name, bytes, (sha256) => fileLink(name, sha256, size, kept), at);
}

/** A share link named a file it could not carry: when a file with this hash opens, it opens so, and
 * `opened` runs once it is open. Meanwhile nothing is shown under the link's settings. */
interface AwaitedFile {
  sha256: string;
  at: OpenAt;
  opened?: () => void;
}
let awaitedFile: AwaitedFile | null = null;

export function awaitFile(file: LinkFile, at: OpenAt, opened?: () => void): void {
  awaitedFile = { sha256: file.sha256, at, ...(opened ? { opened } : {}) };
  useSession.setState({ awaiting: { name: file.name, ...(file.size !== undefined ? { size: file.size } : {}) } });
}

/** Opens `file` for the link that waited for it: under the link's settings, or as recorded (the user
 * said so); a file that fails to open leaves the link waiting. */
async function openForLink(file: File, awaited: AwaitedFile, underLink: boolean): Promise<void> {
  awaitedFile = null;
  const opened = await openFileAt(file, underLink ? awaited.at : undefined);
  if (opened && underLink) awaited.opened?.();
  if (!opened) awaitedFile ??= awaited;
}

/** What the link waits for, without a chosen file's state. */
function waitingOnly(awaiting: Awaiting): Awaiting {
  const { checking: _checking, chosenInstead: _chosen, ...waiting } = awaiting;
  return waiting;
}

/** A file's link: its name and hash, and the file itself when small enough to travel in the link
 * (`bytes`: then read on the page, before they go to the worker), else its size (a page that asks
 * for it says which file it means). */
function fileLink(name: string, sha256: string, size: number, bytes?: ArrayBuffer): LinkSource {
  return bytes && bytes.byteLength <= MAX_EMBEDDED_FILE_BYTES
    ? { kind: 'file', name, sha256, data: toBase64Url(new Uint8Array(bytes)) }
    : { kind: 'file', name, sha256, size };
}

export const useSession = create<SessionState>()((set, get) => ({
  busy: false,
  opening: false,
  progress: null,
  error: null,
  settings: AS_RECORDED,
  confError: null,
  summary: null,
  timeline: null,
  cursor: 0,
  view: null,
  playing: false,
  sourceLink: null,
  sourceId: 0,
  carried: null,
  awaiting: null,
  compare: null,
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
    const refused = configRefusal(text);
    if (refused) {
      set({ confError: refused });
      return;
    }
    set({ settings: { ...get().settings, conf: text }, confError: null, carried: null });
    replayCurrent(shownCursor(), true);
  },
  setMaxSplit(mb) {
    // From the config last asked for, so that quick steps of the slider build on each other.
    const current = get().settings.conf ?? get().summary?.recordedConf ?? '';
    const config = parseAllocConf(current).config;
    const conf = configToString({ ...config, maxSplitSize: mb === null ? Infinity : mb * MiB });
    // A step PyTorch would refuse (below large_segment_size_mb) changes nothing: the link keeps what was applied.
    const refused = configRefusal(conf);
    if (refused) {
      set({ confError: refused });
      return;
    }
    set({ settings: { ...get().settings, conf }, confError: null, carried: null });
    replayCurrent(shownCursor(), true);
  },
  setCapacity(bytes) {
    set({ settings: { ...get().settings, capacityBytes: bytes }, carried: null });
    replayCurrent(shownCursor(), true);
  },
  applySettings({ conf, capacityBytes }) {
    const refused = conf !== null ? configRefusal(conf) : null;
    if (refused) {
      set({ confError: refused });
      return;
    }
    set({ settings: { ...get().settings, conf, capacityBytes }, confError: null, carried: null });
    replayCurrent(shownCursor(), true);
  },
  setDevice(device) {
    set({ settings: { ...get().settings, device } });
    replayCurrent(null);
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
    replayCurrent(get().cursor);
  },
  setCompare(confs) {
    set({ compare: confs });
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
    await openFileAt(file, at);
  },
  async chooseFile(file) {
    const awaited = awaitedFile;
    const awaiting = get().awaiting;
    if (!awaited || !awaiting) return void (await openFileAt(file, undefined));
    const refused = tooLargeToOpen(file);
    if (refused) return set({ error: refused });
    // Hashed before it opens: another file would show under the link's settings, or drop them, unsaid.
    const waiting = waitingOnly(awaiting);
    set({ awaiting: { ...waiting, checking: file.name }, error: null });
    let sha256: string;
    try {
      sha256 = await hashFile(file);
    } catch (e) {
      if (awaitedFile === awaited) set({ awaiting: waiting, error: `${file.name}: ${message(e)}` });
      return;
    }
    // Another link (Back, Forward) waits for its own file now.
    if (awaitedFile !== awaited) return;
    if (sha256 !== awaited.sha256) return set({ awaiting: { ...waiting, chosenInstead: file } });
    set({ awaiting: waiting });
    await openForLink(file, awaited, true);
  },
  async openChosenInstead(how) {
    const awaited = awaitedFile;
    const file = get().awaiting?.chosenInstead;
    if (!awaited || !file) return;
    set({ awaiting: waitingOnly(get().awaiting!) });
    await openForLink(file, awaited, how === 'link');
  },
  async openBytes(name, bytes, at) {
    await openBytesAt(name, bytes, at);
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
  dismissCarried() {
    set({ carried: null });
  },
  async openPrediction(recordings, size, at) {
    set({ error: null, progress: 0 });
    // The link names each recording by its SHA-256, with the file inside when it is small enough.
    const files: { name: string; size: number; file: Blob | ArrayBuffer }[] = [];
    const linked: { size: number; file: LinkFile }[] = [];
    for (const r of recordings) {
      const small = r.data instanceof Blob ? r.data.size <= MAX_EMBEDDED_FILE_BYTES : r.data.byteLength <= MAX_EMBEDDED_FILE_BYTES;
      const bytes = small ? (r.data instanceof Blob ? await r.data.arrayBuffer() : r.data) : null;
      const sha256 = bytes ? sha256Hex(new Uint8Array(bytes)) : await hashFile(r.data as Blob);
      linked.push({ size: r.size, file: bytes ? { kind: 'file', name: r.name, sha256, data: toBase64Url(new Uint8Array(bytes)) } : { kind: 'file', name: r.name, sha256 } });
      files.push({ name: r.name, size: r.size, file: bytes ? bytes.slice(0) : r.data });
    }
    const link: LinkSource = { kind: 'prediction', recordings: linked };
    const id = idFor(link);
    let opened = false;
    const onProgress = callback((fraction: number) => {
      if (!opened) useSession.setState({ progress: fraction });
    });
    await openSource(
      'the prediction',
      id,
      async () => {
        try {
          return await callWorker((w) => w.openPrediction(files.map((f) => (f.file instanceof ArrayBuffer ? { ...f, file: moved(f.file, [f.file]) } : f)), size, onProgress, id));
        } finally {
          opened = true;
        }
      },
      () => link,
      () => at,
      size,
    );
  },
  setSize(size) {
    if (get().settings.size === undefined || !(size > 0)) return;
    set({ settings: { ...get().settings, size } });
    replayCurrent(shownCursor(), true);
  },
  openWorkload(workload, params = {}, at) {
    set({ error: null });
    const link: LinkSource = { kind: 'workload', id: workload, params };
    const id = idFor(link);
    void openSource(workload, id, () => callWorker((w) => w.workload(workload, params, id)), () => link, () => at);
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
