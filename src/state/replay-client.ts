// The page's side of the replay worker: its calls through comlink, counted so that the page knows
// when every call it made has been answered (window.splitscope.ready()).
import { proxy, transfer, wrap, type Remote } from 'comlink';
import type { ReplayApi } from '../worker/replay-worker';
import { startWorker } from './workers';

const worker = startWorker('replay');
const remote: Remote<ReplayApi> = wrap<ReplayApi>(worker);

let pending = 0;
const idleWaiters: (() => void)[] = [];
const busyListeners: ((busy: boolean) => void)[] = [];

/** Calls the worker; the call counts as pending until it is answered (or fails). */
export async function callWorker<T>(call: (api: Remote<ReplayApi>) => Promise<T>): Promise<T> {
  if (pending++ === 0) for (const listen of busyListeners) listen(true);
  try {
    return await call(remote);
  } finally {
    if (--pending === 0) {
      for (const listen of busyListeners) listen(false);
      for (const resolve of idleWaiters.splice(0)) resolve();
    }
  }
}

/** True while a call is unanswered. */
export function workerBusy(): boolean {
  return pending > 0;
}

/** Resolves when every call made so far has been answered. */
export function workerIdle(): Promise<void> {
  return pending === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
}

/** Hears the worker go busy and idle. */
export function onWorkerBusy(listen: (busy: boolean) => void): void {
  busyListeners.push(listen);
}

/** An argument moved to the worker rather than copied. */
export const moved = <T>(value: T, buffers: Transferable[]): T => transfer(value, buffers);
/** A callback the worker may call back (progress). */
export const callback = <F extends (...args: never[]) => unknown>(f: F): F => proxy(f);
