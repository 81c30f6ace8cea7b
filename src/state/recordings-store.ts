// Recordings beside the open source: another snapshot compared with it (before and after a change, two
// batch sizes), or a set of snapshots from one job (rank_0 ... rank_N). Each file is digested in a
// worker of its own (worker/digest-worker.ts), two at a time; the open source's digest comes from the
// replay worker. A new config asked for in the session replays every digest's what-if again, and
// stops the workers of the digests it supersedes.
import { create } from 'zustand';
import { wrap } from 'comlink';
import type { RecordingDigest } from '../trace/replay/recording-digest';
import type { DigestApi } from '../worker/digest-worker';
import { callWorker } from './replay-client';
import { sha256Hex } from '../lib/sha256';
import { hashFile } from './hash-client';
import { toBase64Url } from './link-codec';
import { MAX_EMBEDDED_FILE_BYTES, type LinkFile } from './link-schema';
import { tooLargeToOpen, useSession } from './session-store';
import { startWorker } from './workers';

export interface RankRow {
  name: string;
  file: File;
  digest: RecordingDigest | null;
  error: string | null;
}

interface RecordingsState {
  /** A snapshot compared with the open source, and the open source's own digest; `link`: how a share link names it (once hashed). */
  other: { file: File; digest: RecordingDigest | null; error: string | null; link: LinkFile | null } | null;
  /** A link compares with this file, too large to travel in it: the user is asked for it. */
  wanted: LinkFile | null;
  self: RecordingDigest | null;
  /** A set of snapshots from one job, in rank order. */
  ranks: RankRow[] | null;
  busy: boolean;
  compareWith(file: File): Promise<void>;
  openRanks(files: File[]): Promise<void>;
  closeCompare(): void;
  closeRanks(): void;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A file's digest under `conf`, in a worker of its own that ends with the answer (or when `stop`
 * aborts: a digest a newer config superseded would take a core from the one that replaces it). */
async function digestFile(file: File, conf: string | null, stop: AbortSignal): Promise<RecordingDigest> {
  const refused = tooLargeToOpen(file);
  if (refused) throw new Error(refused);
  stop.throwIfAborted();
  const worker = startWorker('digest');
  let end = (): void => {};
  const stopped = new Promise<never>((_, reject) => {
    end = () => reject(stop.reason);
    stop.addEventListener('abort', end);
  });
  try {
    return await Promise.race([wrap<DigestApi>(worker).digest(file.name, file, conf), stopped]);
  } finally {
    stop.removeEventListener('abort', end);
    worker.terminate();
  }
}

/** Runs `tasks` two at a time (the machine's cores, the page keeps one); none starts once `stop` aborts. */
async function twoAtATime(tasks: (() => Promise<void>)[], stop: AbortSignal): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length && !stop.aborted) await tasks[next++]!();
  };
  await Promise.all([lane(), lane()]);
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

/**
 * One kind of digest run (the comparison's, the ranks'): only the current run's digests land, and a
 * newer one (a new config, file or set, or a close) stops the workers of the one it supersedes.
 */
class Runs {
  current = 0;
  private controller = new AbortController();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Supersedes the current run; returns the new one's number. */
  next(): number {
    this.controller.abort(new DOMException('A newer run replaced this digest.', 'AbortError'));
    this.controller = new AbortController();
    return ++this.current;
  }
}

const compareRuns = new Runs();
const rankRuns = new Runs();
let pending = 0;

function track<T>(p: Promise<T>): Promise<T> {
  pending++;
  useRecordings.setState({ busy: true });
  return p.finally(() => {
    if (--pending === 0) useRecordings.setState({ busy: false });
  });
}

export const useRecordings = create<RecordingsState>()((set) => ({
  other: null,
  wanted: null,
  self: null,
  ranks: null,
  busy: false,
  async compareWith(file) {
    set({ other: { file, digest: null, error: null, link: null }, self: null, wanted: null });
    void linkOf(file).then(
      (link) => useRecordings.getState().other?.file === file && useRecordings.setState({ other: { ...useRecordings.getState().other!, link } }),
      () => {},
    );
    await digestCompare(compareRuns.next());
  },
  async openRanks(files) {
    const sorted = [...files].filter((f) => /\.(pickle|pkl|gz|json)$/i.test(f.name)).sort(byRank);
    set({ ranks: sorted.map((file) => ({ name: file.name, file, digest: null, error: null })) });
    if (sorted.length === 0) {
      set({ ranks: [{ name: '(no snapshot files)', file: new File([], ''), digest: null, error: 'None of the files chosen is a snapshot (.pickle, .pickle.gz, .json).' }] });
      return;
    }
    await digestRanks(rankRuns.next());
  },
  closeCompare() {
    compareRuns.next();
    set({ other: null, self: null, wanted: null });
  },
  closeRanks() {
    rankRuns.next();
    set({ ranks: null });
  },
}));

async function digestCompare(gen: number): Promise<void> {
  const other = useRecordings.getState().other;
  if (!other) return;
  const conf = useSession.getState().settings.conf;
  await track(
    Promise.all([
      callWorker((w) => w.digest(conf)).then(
        (self) => gen === compareRuns.current && useRecordings.setState({ self }),
        (e) => gen === compareRuns.current && useRecordings.setState({ other: { ...useRecordings.getState().other!, error: `${useSession.getState().summary?.source}: ${message(e)}` } }),
      ),
      digestFile(other.file, conf, compareRuns.signal).then(
        (digest) => gen === compareRuns.current && useRecordings.getState().other?.file === other.file && useRecordings.setState({ other: { ...useRecordings.getState().other!, digest, error: null } }),
        (e) => gen === compareRuns.current && useRecordings.getState().other?.file === other.file && useRecordings.setState({ other: { ...useRecordings.getState().other!, digest: null, error: `${other.file.name}: ${message(e)}` } }),
      ),
    ]),
  );
}

async function digestRanks(gen: number): Promise<void> {
  const rows = useRecordings.getState().ranks;
  if (!rows) return;
  const conf = useSession.getState().settings.conf;
  const stop = rankRuns.signal;
  const update = (i: number, patch: Partial<RankRow>): void => {
    if (gen !== rankRuns.current || useRecordings.getState().ranks?.[i]?.file !== rows[i]!.file) return;
    const next = [...(useRecordings.getState().ranks ?? [])];
    next[i] = { ...next[i]!, ...patch };
    useRecordings.setState({ ranks: next });
  };
  await track(
    twoAtATime(
      rows.map((row, i) => async () => {
        try {
          update(i, { digest: await digestFile(row.file, conf, stop), error: null });
        } catch (e) {
          update(i, { digest: null, error: message(e) });
        }
      }),
      stop,
    ),
  );
}

/** Resolves when no digest is being made (tests). */
export async function recordingsIdle(): Promise<void> {
  while (pending > 0) await new Promise((r) => setTimeout(r, 20));
}

/** A new config asked for: each digest's what-if again. A new source: the open source's digest again. */
export function installRecordings(): void {
  useSession.subscribe((s, prev) => {
    const confChanged = s.settings.conf !== prev.settings.conf;
    const sourceChanged = s.summary?.source !== prev.summary?.source && s.summary !== null;
    if (!confChanged && !sourceChanged) return;
    if (useRecordings.getState().other) void digestCompare(compareRuns.next());
    // The ranks' digests depend on the config alone: a new source leaves them running.
    if (confChanged && useRecordings.getState().ranks) void digestRanks(rankRuns.next());
  });
}
