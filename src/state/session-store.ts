// What the page shows: the source, the config typed, and the latest replay of one against the other.
import { create } from 'zustand';
import { ConfigError } from '../allocator/config-error';
import { parseAllocConf } from '../allocator/config-parser';
import type { RequestStream } from '../trace/request-stream';
import type { FromWorker, ReplaySummary, ToWorker } from '../worker/replay-protocol';

export const SAMPLE_URL = `${import.meta.env.BASE_URL}samples/train_gpt2-n12.pickle.gz`;
export const SAMPLE_NAME = 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)';
/** Files larger than this are refused before reading them into memory. */
export const MAX_FILE_BYTES = 1.5 * 2 ** 30;

interface SessionState {
  busy: boolean;
  progress: number | null;
  /** The last import or replay error; the previous result stays on screen. */
  error: string | null;
  confText: string | null;
  confError: string | null;
  summary: ReplaySummary | null;
  setConf(text: string): void;
  openFile(file: File): Promise<void>;
  openSample(): Promise<void>;
}

const worker = new Worker(new URL('../worker/replay-worker.ts', import.meta.url), { type: 'module' });
let pending = 0;
let idle: Promise<void> = Promise.resolve();
let settle: (() => void) | null = null;
/** Callers waiting for the open snapshot's request stream, answered in order. */
const streamWaiters: { resolve(s: RequestStream): void; reject(e: Error): void }[] = [];

function send(message: ToWorker, transfer: Transferable[] = []): void {
  if (pending++ === 0) idle = new Promise((resolve) => (settle = resolve));
  useSession.setState({ busy: true });
  worker.postMessage(message, transfer);
}

worker.onmessage = (event: MessageEvent<FromWorker>) => {
  const m = event.data;
  if (m.type === 'progress') {
    useSession.setState({ progress: m.fraction });
    return;
  }
  if (m.type === 'result') useSession.setState({ summary: m.summary, progress: null });
  else if (m.type === 'stream') streamWaiters.shift()?.resolve(m.stream);
  else if (m.type === 'error' && m.stream) streamWaiters.shift()?.reject(new Error(m.message));
  else if (m.type === 'error') useSession.setState({ error: m.message, progress: null });
  if (--pending === 0) {
    useSession.setState({ busy: false });
    settle?.();
  }
};

/** Resolves when every request sent so far has been answered. */
export function whenIdle(): Promise<void> {
  return idle;
}

/** The open snapshot's request stream (built by the worker on its first replay). */
export function snapshotStream(): Promise<RequestStream> {
  return new Promise((resolve, reject) => {
    streamWaiters.push({ resolve, reject });
    send({ type: 'stream' });
  });
}

async function open(name: string, bytes: ArrayBuffer): Promise<void> {
  useSession.setState({ error: null, progress: 0 });
  send({ type: 'open', name, bytes }, [bytes]);
  send({ type: 'replay', conf: useSession.getState().confText, capacityBytes: null });
}

export const useSession = create<SessionState>()((set) => ({
  busy: false,
  progress: null,
  error: null,
  confText: null,
  confError: null,
  summary: null,
  setConf(text) {
    try {
      parseAllocConf(text);
    } catch (e) {
      set({ confError: e instanceof ConfigError ? e.message : String(e) });
      return;
    }
    set({ confText: text, confError: null });
    send({ type: 'replay', conf: text, capacityBytes: null });
  },
  async openFile(file) {
    if (file.size > MAX_FILE_BYTES) {
      set({ error: `${file.name} is ${(file.size / 2 ** 30).toFixed(1)} GiB: too large to open here (limit 1.5 GiB).` });
      return;
    }
    await open(file.name, await file.arrayBuffer());
  },
  async openSample() {
    const response = await fetch(SAMPLE_URL);
    if (!response.ok) {
      set({ error: `The built-in sample could not be loaded (${response.status}).` });
      return;
    }
    await open(SAMPLE_NAME, await response.arrayBuffer());
  },
}));
