// The share link in the address bar: the page opens what a link says (or the built-in workload,
// playing), keeps the hash in step with the view, and makes Back undo a config change. A link carries
// only what was applied (the settings of the replay on screen), and a link whose parts cannot all be
// applied opens what it can and says what it could not: a refused config opens the snapshot as
// recorded, a file too large to travel in it is asked for (nothing else is shown meanwhile), a link
// cut short gives the default view and a message.
import { configRefusal } from '../allocator/config-parser';
import { decodeLink, encodeLink, fromBase64Url } from './link-codec';
import { DEFAULT_LOOK, type LinkSource, type LinkState } from './link-schema';
import { LinkError } from './link-error';
import { insertedCallsOf } from '../worker/replay-settings';
import { sha256Hex } from '../lib/sha256';
import { awaitFile, DEFAULT_WORKLOAD, useSession, whenIdle, type OpenAt } from './session-store';
import { launchFile } from './launch-file';
import { useRecordings } from './recordings-store';
import { search, useSearch, clearSearch } from './search-store';
import { useStacks } from './stack-store';
import { startDefaultStress } from './stress-store';

/** The cursor moves often (playing, dragging): the address bar follows once it has rested this long.
 * Not on a timer while it moves: with a snapshot embedded in the link, one write costs the page
 * 13-50 ms (the browser takes in a URL of hundreds of KB), a stall in the middle of a scrub. */
const CURSOR_SYNC_MS = 500;
/** A config change reaches the address bar once the config has rested this long. */
const CONFIG_SYNC_MS = 250;

/** The view as a link holds it: the source, and the settings of the replay on screen (what was applied). */
export function linkState(): LinkState | null {
  const s = useSession.getState();
  if (!s.sourceLink || !s.summary || s.summary.key.source !== s.sourceId) return null;
  const { source: _source, ...applied } = s.summary.key;
  const atEnd = s.cursor >= s.summary.requests - 1;
  const compareWith = useRecordings.getState().other?.link ?? useRecordings.getState().wanted;
  const find = useSearch.getState().input;
  const selected = useStacks.getState().selection;
  const stack = selected && ('site' in selected ? { site: selected.site } : { path: [...selected.path] });
  return {
    v: 1,
    source: s.sourceLink,
    conf: applied.conf,
    capacityBytes: applied.capacityBytes,
    cursor: atEnd ? null : s.cursor,
    ...(applied.device ? { device: applied.device } : {}),
    ...insertedCallsOf(applied),
    ...(applied.size !== undefined ? { size: applied.size } : {}),
    ...(s.look.zoom ? { zoom: s.look.zoom } : {}),
    ...(s.look.pinned !== null ? { pinned: s.look.pinned } : {}),
    ...(s.look.panels.join() !== DEFAULT_LOOK.panels.join() ? { panels: s.look.panels } : {}),
    ...(s.compare ? { compare: s.compare } : {}),
    ...(compareWith ? { compareWith } : {}),
    ...(find ? { find } : {}),
    ...(stack ? { stack } : {}),
  };
}

/** The share link of the current view. */
export function currentLink(): string {
  const state = linkState();
  return location.origin + location.pathname + location.search + (state ? encodeLink(state) : '');
}

/** Where a link's view opens: its settings, cursor, look and comparison; what of it cannot be applied
 * is left out and said in `problems`. */
function openAtOf(state: LinkState, problems: string[]): OpenAt {
  let conf = state.conf;
  const refused = conf !== null ? configRefusal(conf) : null;
  if (refused) {
    problems.push(`This link's config "${conf}" is refused (${refused}): ${state.source.kind === 'file' ? state.source.name : 'its source'} opens as recorded.`);
    conf = null;
  }
  const settings = {
    conf,
    capacityBytes: state.capacityBytes,
    ...(state.device ? { device: state.device } : {}),
    ...insertedCallsOf(state),
    ...(state.size !== undefined ? { size: state.size } : {}),
  };
  let compare = state.compare ?? null;
  const bad = compare?.map((c) => [c, configRefusal(c)] as const).find(([, r]) => r !== null);
  if (bad) {
    problems.push(`This link compares the config "${bad[0]}", which is refused (${bad[1]}): the comparison is left out.`);
    compare = null;
  }
  const look = { zoom: state.zoom ?? null, pinned: state.pinned ?? null, panels: state.panels ?? DEFAULT_LOOK.panels };
  return { settings, cursor: state.cursor, look, compare };
}

/** Opens what `state` describes. */
async function apply(state: LinkState, problems: string[]): Promise<void> {
  const at = openAtOf(state, problems);
  const session = useSession.getState();
  const source = state.source;
  if (source.kind === 'workload') session.openWorkload(source.id, source.params, at);
  else if (source.kind === 'sample') await session.openSample(at);
  else if (source.kind === 'prediction') {
    const absent = source.recordings.filter((r) => r.file.data === undefined);
    if (absent.length > 0) {
      // Nothing of another source is shown under this link's settings: the page says what to open.
      const sizes = source.recordings.map((r) => `${r.file.name} at ${r.size}`).join(', ');
      useSession.setState({ awaiting: { name: `a run predicted from ${sizes} (${absent.map((r) => r.file.name).join(' and ')} too large to travel in a link)`, prediction: true } });
      return;
    }
    const recordings = source.recordings.map((r) => {
      const bytes = fromBase64Url(r.file.data!);
      if (sha256Hex(bytes) !== r.file.sha256) throw new LinkError(`The snapshot embedded in this link (${r.file.name}) does not match its hash: the link was altered.`);
      return { name: r.file.name, size: r.size, data: bytes.buffer as ArrayBuffer };
    });
    await session.openPrediction(recordings, at.settings.size ?? source.recordings[0]!.size, at);
  } else if (source.data !== undefined) {
    const bytes = fromBase64Url(source.data);
    if (sha256Hex(bytes) !== source.sha256) throw new LinkError(`The snapshot embedded in this link (${source.name}) does not match its hash: the link was altered.`);
    await session.openBytes(source.name, bytes.buffer as ArrayBuffer, at);
  } else {
    // Nothing of another source is shown under this link's settings: the page waits for the file.
    awaitFile(source, at, () => {
      openComparison(state);
      void openSelections(state);
    });
    return;
  }
  openComparison(state);
  void openSelections(state);
}

/** The link's search and stack selection, once its source is open and replayed. */
async function openSelections(state: LinkState): Promise<void> {
  await whenIdle();
  if (state.find) await search(state.find).catch(() => {});
  else clearSearch();
  useStacks.getState().select(state.stack ?? null);
}

/** The link's comparison with another snapshot (after its source opened, so that it compares that
 * source; one too large for the link is asked for). */
function openComparison(state: LinkState): void {
  const other = state.compareWith;
  const recordings = useRecordings.getState();
  if (!other) {
    if (recordings.other || recordings.wanted) recordings.closeCompare();
  } else if (other.data !== undefined) {
    const bytes = fromBase64Url(other.data);
    // The source stays open: only the comparison is left out, and said.
    if (sha256Hex(bytes) !== other.sha256) {
      recordings.closeCompare();
      useSession.setState({ error: `The snapshot this link compares with (${other.name}) does not match its hash: the link was altered, and the comparison is left out.` });
    } else if (recordings.other?.link?.sha256 !== other.sha256) recordings.compareWith(new File([bytes as Uint8Array<ArrayBuffer>], other.name));
  } else if (recordings.other?.link?.sha256 !== other.sha256) {
    recordings.closeCompare();
    useRecordings.setState({ wanted: other });
  }
}

/** GPU stress starts once per page: playing on the default view, paused under a link or a launched file. */
let stressStarted = false;
function startStress(playing: boolean): void {
  if (stressStarted) return;
  stressStarted = true;
  void startDefaultStress(playing);
}

/** The built-in workload, playing once its first replay is in; a source opened before that (a file
 * chosen while the workload opened) is shown where it opened, not played. */
function openDefault(): void {
  const before = useSession.getState().summary;
  useSession.getState().openWorkload(DEFAULT_WORKLOAD);
  startStress(true);
  const unsubscribe = useSession.subscribe((s) => {
    if (!s.summary || s.summary === before) return;
    unsubscribe();
    if (s.sourceLink?.kind === 'workload' && s.sourceLink.id === DEFAULT_WORKLOAD) s.setPlaying(true);
  });
}

/** The next change of source or config comes from the address bar: it replaces, not pushes. */
let fromAddressBar = true;

/** The address bar's view being opened (ready() waits until it has asked for its source). */
let opening: Promise<void> = Promise.resolve();
export function linkOpened(): Promise<void> {
  return opening;
}

/** Opens the link in the address bar, or the default view; a bad link says why and opens the default. */
async function openFromUrl(): Promise<void> {
  fromAddressBar = true;
  const problems: string[] = [];
  const say = (): void => {
    if (problems.length > 0) useSession.setState({ error: problems.join(' ') });
  };
  try {
    const state = decodeLink(location.hash);
    // Launched with a file (splitscope open, a report): that file, in the view its link shows when the
    // link names it (a report reloaded after a change), else under the report's config.
    const launched = await launchFile();
    if (launched && (!state || (state.source.kind === 'file' && state.source.data === undefined))) {
      startStress(false);
      if (state?.source.kind === 'file') {
        awaitFile(state.source, openAtOf(state, problems), () => {
          openComparison(state);
          void openSelections(state);
        });
      }
      const at = !state && launched.conf !== null ? { settings: { conf: launched.conf, capacityBytes: null }, cursor: null } : undefined;
      await useSession.getState().openFile(launched.file, at);
      say();
      return;
    }
    if (state) {
      startStress(state.source.kind === 'workload');
      await apply(state, problems);
      say();
      return;
    }
    openDefault();
    return;
  } catch (e) {
    problems.push(e instanceof LinkError ? e.message : `This link could not be opened: ${(e as Error).message}`);
  }
  openDefault();
  // After openDefault, which clears the last error.
  say();
}

let installed = false;
/** Once per page: open from the URL, then keep the URL in step. */
export function installShareLink(): void {
  if (installed) return;
  installed = true;
  opening = openFromUrl();
  let lastSource: LinkSource | null = null;
  let lastConfig = '';
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** The write waiting for its timer pushes a history entry (else it replaces the current one). */
  let pushWanted = false;
  const write = (): void => {
    timer = null;
    const push = pushWanted;
    pushWanted = false;
    const state = linkState();
    if (!state) return;
    const hash = encodeLink(state);
    if (hash === location.hash) return;
    if (push) history.pushState(null, '', hash);
    else history.replaceState(null, '', hash);
  };
  const onChange = (): void => {
    const s = useSession.getState();
    if (!s.sourceLink || !s.summary) return;
    // The source by identity: an embedded snapshot is too big to compare as text on every change.
    const config = JSON.stringify([s.summary.key, s.compare]);
    if (s.sourceLink !== lastSource || config !== lastConfig) {
      // A new source or config is a step Back can undo; what the address bar asked for replaces. Written
      // once the config rests: a dragged slider makes one entry, and encoding an embedded snapshot
      // stays off the path from the slider to the view.
      pushWanted ||= !fromAddressBar;
      fromAddressBar = false;
      lastSource = s.sourceLink;
      lastConfig = config;
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(write, CONFIG_SYNC_MS);
    } else if (!s.playing) {
      // The wait starts again (a config write waiting too: it goes with the cursor, as one entry).
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(write, CURSOR_SYNC_MS);
    }
  };
  useSession.subscribe((s, before) => {
    if (s.cursor !== before.cursor || s.summary !== before.summary || s.sourceLink !== before.sourceLink || s.look !== before.look || s.compare !== before.compare) {
      onChange();
    }
  });
  useSearch.subscribe((q, before) => {
    if (q.input !== before.input) onChange();
  });
  useStacks.subscribe((t, before) => {
    if (t.selection !== before.selection) onChange();
  });
  useRecordings.subscribe((r, before) => {
    if (r.other?.link !== before.other?.link || r.wanted !== before.wanted || (r.other === null) !== (before.other === null)) onChange();
  });
  window.addEventListener('popstate', () => void (opening = openFromUrl()));
}
