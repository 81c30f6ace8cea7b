// One task at a time, and of the tasks scheduled meanwhile only the latest runs (as Perfetto's
// base/async_limiter.ts): a dragged slider asks for dozens of replays and gets the first and the
// last. The running task is told through its AbortSignal when a newer one is waiting, so that work
// which can stop early (a sweep) does.

type Task = (superseded: AbortSignal) => Promise<void>;

interface Queued {
  task: Task;
  settle: () => void;
}

export class AsyncLimiter {
  private queued: Queued | null = null;
  private running: AbortController | null = null;
  private idleWaiters: (() => void)[] = [];

  /** Resolves when `task` has run, or when a newer task took its place before it started. Errors
   * from `task` are its own to handle: they are reported to the console, never thrown here. */
  schedule(task: Task): Promise<void> {
    return new Promise((settle) => {
      this.queued?.settle();
      this.queued = { task, settle };
      this.running?.abort();
      if (!this.running) void this.drain();
    });
  }

  /** True while a task runs or waits. */
  get busy(): boolean {
    return this.running !== null || this.queued !== null;
  }

  /** Resolves once no task runs or waits. */
  idle(): Promise<void> {
    return this.busy ? new Promise((resolve) => this.idleWaiters.push(resolve)) : Promise.resolve();
  }

  private async drain(): Promise<void> {
    while (this.queued) {
      const { task, settle } = this.queued;
      this.queued = null;
      const controller = new AbortController();
      this.running = controller;
      try {
        await task(controller.signal);
      } catch (e) {
        console.error(e);
      }
      this.running = null;
      settle();
    }
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
