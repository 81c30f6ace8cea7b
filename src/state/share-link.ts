// The share link in the address bar: the page opens what a link says (or the built-in workload,
// playing), keeps the hash in step with the view, and makes Back undo a config change.
import { useCompare } from './compare-store';
import { decodeLink, encodeLink, fromBase64Url } from './link-codec';
import { DEFAULT_LOOK, type LinkSource, type LinkState } from './link-schema';
import { LinkError } from './link-error';
import { insertedCallsOf } from '../worker/replay-settings';
import { sha256Hex } from '../lib/sha256';
import { awaitFile, DEFAULT_WORKLOAD, useSession, whenIdle, type OpenAt } from './session-store';
import { launchFile } from './launch-file';
import { useRecordings } from './recordings-store';
import { useSearch } from './search-store';
import { useStacks } from './stack-store';

/** The cursor moves often (playing, dragging): the address bar follows once it has rested this long.
 * Not on a timer while it moves: with a snapshot embedded in the link, one write costs the page
 * 13-50 ms (the browser takes in a URL of hundreds of KB), a stall in the middle of a scrub. */
const CURSOR_SYNC_MS = 500;
/** A config change reaches the address bar once the config has rested this long. */
const CONFIG_SYNC_MS = 250;

export function linkState(): LinkState | null {
  const s = useSession.getState();
  if (!s.sourceLink || !s.summary) return null;
  const atEnd = s.cursor >= s.summary.requests - 1;
  const compare = useCompare.getState().confs;
  const compareWith = useRecordings.getState().other?.link ?? useRecordings.getState().wanted;
  const find = useSearch.getState().query ? useSearch.getState().input : '';
  const selected = useStacks.getState().selection;
  const stack = selected && ('site' in selected ? { site: selected.site } : { path: [...selected.path] });
  return {
    v: 1,
    source: s.sourceLink,
    conf: s.settings.conf,
    capacityBytes: s.settings.capacityBytes,
    cursor: atEnd ? null : s.cursor,
    ...(s.settings.device ? { device: s.settings.device } : {}),
    ...insertedCallsOf(s.settings),
    ...(s.look.zoom ? { zoom: s.look.zoom } : {}),
    ...(s.look.pinned !== null ? { pinned: s.look.pinned } : {}),
    ...(s.look.panels.join() !== DEFAULT_LOOK.panels.join() ? { panels: s.look.panels } : {}),
    ...(compare ? { compare } : {}),
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

/** Where a link's view opens: its settings, cursor and look. */
function openAtOf(state: LinkState): OpenAt {
  const settings = {
    conf: state.conf,
    capacityBytes: state.capacityBytes,
    ...(state.device ? { device: state.device } : {}),
    ...insertedCallsOf(state),
  };
  const look = { zoom: state.zoom ?? null, pinned: state.pinned ?? null, panels: state.panels ?? DEFAULT_LOOK.panels };
  return { settings, cursor: state.cursor, look };
}

/** Opens what `state` describes. */
async function apply(state: LinkState): Promise<void> {
  const at = openAtOf(state);
  const session = useSession.getState();
  const source = state.source;
  if (source.kind === 'workload') session.openWorkload(source.id, source.params, at);
  else if (source.kind === 'sample') await session.openSample(at);
  else if (source.data !== undefined) {
    const bytes = fromBase64Url(source.data);
    if (sha256Hex(bytes) !== source.sha256) throw new LinkError(`The snapshot embedded in this link (${source.name}) does not match its hash: the link was altered.`);
    await session.openBytes(source.name, bytes.buffer as ArrayBuffer, at);
  } else {
    awaitFile(source.sha256, at, () => void openSelections(state));
    openComparison(state);
    throw new LinkError(`This link shows ${source.name}, which is too large to travel in a link: open that file (Open snapshot…) to see the view.`);
  }
  openComparison(state);
  void openSelections(state);
}

/** The link's search and stack selection, once its source is open and replayed. */
async function openSelections(state: LinkState): Promise<void> {
  await whenIdle();
  if (state.find) await useSearch.getState().search(state.find);
  else if (useSearch.getState().query) useSearch.getState().clear();
  useStacks.getState().select(state.stack ?? null);
}

/** The link's comparisons (after its source opened, so that they compare that source): of configs,
 * and with another snapshot (which, too large for the link, the page asks for). */
function openComparison(state: LinkState): void {
  if (state.compare) useCompare.getState().open(state.compare);
  else useCompare.getState().close();
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
    }
    else if (recordings.other?.link?.sha256 !== other.sha256) void recordings.compareWith(new File([bytes as Uint8Array<ArrayBuffer>], other.name));
  } else if (recordings.other?.link?.sha256 !== other.sha256) {
    recordings.closeCompare();
    useRecordings.setState({ wanted: other });
  }
}

/** The built-in workload, playing once its first replay is in; a source opened before that (a file
 * chosen while the workload opened) is shown where it opened, not played. */
function openDefault(): void {
  const before = useSession.getState().summary;
  useSession.getState().openWorkload(DEFAULT_WORKLOAD);
  const unsubscribe = useSession.subscribe((s) => {
    if (!s.summary || s.summary === before) return;
    unsubscribe();
    if (s.sourceLink?.kind === 'workload' && s.sourceLink.id === DEFAULT_WORKLOAD) s.setPlaying(true);
  });
}

/** The next change of source or config comes from the address bar: it replaces, not pushes. */
let fromAddressBar = true;

/** Opens the link in the address bar, or the default view; a bad link says why and opens the default. */
async function openFromUrl(): Promise<void> {
  fromAddressBar = true;
  let problem: string;
  try {
    const state = decodeLink(location.hash);
    // Launched with a file (splitscope open, a report): that file, in the view its link shows when the
    // link names it (a report reloaded after a change), else under the report's config.
    const launched = await launchFile();
    if (launched && (!state || (state.source.kind === 'file' && state.source.data === undefined))) {
      if (state?.source.kind === 'file') awaitFile(state.source.sha256, openAtOf(state), () => void openSelections(state));
      const at = !state && launched.conf !== null ? { settings: { conf: launched.conf, capacityBytes: null }, cursor: null } : undefined;
      await useSession.getState().openFile(launched.file, at);
      return;
    }
    if (state) {
      await apply(state);
      return;
    }
    openDefault();
    return;
  } catch (e) {
    problem = e instanceof LinkError ? e.message : `This link could not be opened: ${(e as Error).message}`;
  }
  openDefault();
  // After openDefault, which clears the last error.
  useSession.setState({ error: problem });
}

let installed = false;
/** Once per page: open from the URL, then keep the URL in step. */
export function installShareLink(): void {
  if (installed) return;
  installed = true;
  void openFromUrl();
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
    const config = JSON.stringify([s.settings, useCompare.getState().confs]);
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
    if (
      s.cursor !== before.cursor ||
      s.summary !== before.summary ||
      s.settings !== before.settings ||
      s.sourceLink !== before.sourceLink ||
      s.look !== before.look
    ) {
      onChange();
    }
  });
  useCompare.subscribe((c, before) => {
    if (c.confs !== before.confs) onChange();
  });
  useSearch.subscribe((q, before) => {
    if (q.query !== before.query || q.input !== before.input) onChange();
  });
  useStacks.subscribe((t, before) => {
    if (t.selection !== before.selection) onChange();
  });
  useRecordings.subscribe((r, before) => {
    if (r.other?.link !== before.other?.link || r.wanted !== before.wanted || (r.other === null) !== (before.other === null)) onChange();
  });
  window.addEventListener('popstate', () => void openFromUrl());
}
