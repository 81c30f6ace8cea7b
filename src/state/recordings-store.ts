// Recordings beside the open source: another snapshot compared with it (before and after a change, two
// batch sizes), or a set of snapshots from one job (rank_0 ... rank_N). Which files are the user's; each
// file's digest (worker/digest-worker.ts, one worker per file, two at a time) is a derived result of the
// file and the config asked for, the open source's digest (from the replay worker) of the source and
// the config. A new config supersedes every digest of the last one, and the workers still making those
// are ended.
import { create } from 'zustand';
import { wrap } from 'comlink';
import { queryOptions } from '@tanstack/react-query';
import type { RecordingDigest } from '../trace/replay/recording-digest';
import type { DigestApi } from '../worker/digest-worker';
import { callWorker } from './replay-client';
import { sha256Hex } from '../lib/sha256';
import { hashFile } from './hash-client';
import { toBase64Url } from './link-codec';
import { MAX_EMBEDDED_FILE_BYTES, type LinkFile } from './link-schema';
import { onNewSource, tooLargeToOpen } from './session-store';
import { startWorker } from './workers';

interface RecordingsState {
  /** A snapshot compared with the open source; `link`: how a share link names it (once hashed). */
  other: { file: File; link: LinkFile | null } | null;
  /** A link compares with this file, too large to travel in it: the user is asked for it. */
  wanted: LinkFile | null;
  /** A set of snapshots from one job, in rank order (or a message when none of the files chosen is one). */
  ranks: File[] | null;
  ranksError: string | null;
  compareWith(file: File): void;
  openRanks(files: File[]): void;
  closeCompare(): void;
  closeRanks(): void;
}

/** How a share link names a compared file: small ones travel inside it. */
async function linkOf(file: File): Promise<LinkFile> {
  if (file.size <= MAX_EMBEDDED_FILE_BYTES) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    return { kind: 'file', name: file.name, sha256: sha256Hex(bytes), data: toBase64Url(bytes) };
  }
  return { kind: 'file', name: file.name, sha256: await hashFile(file) };
}

/** rank_2 before rank_10: names compared with their numbers as numbers. */
const byRank = (a: File, b: File): number => a.name.localeCompare(b.name, undefined, { numeric: true });

export const useRecordings = create<RecordingsState>()((set) => ({
  other: null,
  wanted: null,
  ranks: null,
  ranksError: null,
  compareWith(file) {
    set({ other: { file, link: null }, wanted: null });
    void linkOf(file).then(
      (link) => useRecordings.getState().other?.file === file && useRecordings.setState({ other: { file, link } }),
      () => {},
    );
  },
  openRanks(files) {
    const sorted = [...files].filter((f) => /\.(pickle|pkl|gz|json)$/i.test(f.name)).sort(byRank);
    set({ ranks: sorted, ranksError: sorted.length === 0 ? 'None of the files chosen is a snapshot (.pickle, .pickle.gz, .json).' : null });
  },
  closeCompare() {
    set({ other: null, wanted: null });
  },
  closeRanks() {
    set({ ranks: null, ranksError: null });
  },
}));

// A new source the user opened (not a link's, nor a rank's row): the comparison of the last one closes.
onNewSource((fromLink) => {
  if (!fromLink && useRecordings.getState().other) useRecordings.getState().closeCompare();
});

/** Files get an id of their own (a query key holds the id, not the File). */
const fileIds = new WeakMap<File, number>();
let lastFileId = 0;
function fileId(file: File): number {
  let id = fileIds.get(file);
  if (id === undefined) fileIds.set(file, (id = ++lastFileId));
  return id;
}

/** Digest workers at once: the machine's cores, the page keeps one. */
const DIGESTS_AT_ONCE = 2;
let running = 0;
const waiting: (() => void)[] = [];

/** The digests being made now, each a worker of its own (tests: a new config ends the ones it superseded). */
const live = new Set<{ file: string; conf: string | null }>();
export function digestsRunning(): { file: string; conf: string | null }[] {
  return [...live];
}

/** Waits for a free digest slot; false when `stop` aborted first (the digest never starts). */
function slot(stop: AbortSignal): Promise<boolean> {
  if (running < DIGESTS_AT_ONCE) {
    running++;
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const go = (): void => {
      stop.removeEventListener('abort', cancel);
      running++;
      resolve(true);
    };
    const cancel = (): void => {
      waiting.splice(waiting.indexOf(go), 1);
      resolve(false);
    };
    waiting.push(go);
    stop.addEventListener('abort', cancel, { once: true });
  });
}

function release(): void {
  running--;
  waiting.shift()?.();
}

/** A file's digest under `conf`, in a worker of its own that ends with the answer, or when `stop`
 * aborts (a digest a newer config superseded would take a core from the one that replaces it). */
async function digestFile(file: File, conf: string | null, stop: AbortSignal): Promise<RecordingDigest> {
  const refused = tooLargeToOpen(file);
  if (refused) throw new Error(refused);
  if (!(await slot(stop))) throw stop.reason;
  const worker = startWorker('digest');
  const entry = { file: file.name, conf };
  live.add(entry);
  let end = (): void => {};
  const stopped = new Promise<never>((_, reject) => {
    end = () => reject(stop.reason);
    stop.addEventListener('abort', end);
  });
  try {
    stop.throwIfAborted();
    return await Promise.race([wrap<DigestApi>(worker).digest(file.name, file, conf), stopped]);
  } catch (e) {
    if (stop.aborted) throw e;
    throw new Error(`${file.name}: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    stop.removeEventListener('abort', end);
    worker.terminate();
    live.delete(entry);
    release();
  }
}

/** Another file's digest under the config asked for. */
export function digestQuery(file: File, conf: string | null) {
  return queryOptions({
    queryKey: ['digest', fileId(file), conf],
    queryFn: ({ signal }) => digestFile(file, conf, signal),
  });
}

/** The open source's digest (device 0, as another file's) under the config asked for. */
export function selfDigestQuery(source: number, conf: string | null) {
  return queryOptions({
    queryKey: ['digest-self', source, conf],
    queryFn: () => callWorker((w) => w.digest(source, conf)),
  });
}
