// The worker threads splitscope mcp's tool calls run on (mcp-worker.ts): calls run side by side, each on
// a thread of its own (a thread that finished a call waits, warm, for the next); a call past its time
// limit, or one the client cancels, has its thread terminated; a thread that dies (out of memory, a
// crash) is a tool error for its call alone. The server goes on serving in every case.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WorkerCall, WorkerReply } from './mcp-worker';

export interface PoolOptions {
  /** The bundled CLI's entry, started with argv ['mcp-worker']. */
  entry: string;
  /** Seconds a call may run before it is stopped. */
  timeLimit: number;
  /** How the time limit is set, for the message of a call stopped by it. */
  timeLimitHow: string;
  /** Calls that run at once; more wait for one to finish (default: 4, or the CPUs if more). */
  running?: number;
  /** Threads kept warm between calls. */
  idle?: number;
  /** Each thread's heap limit in MiB (resourceLimits.maxOldGenerationSizeMb); default Node's. */
  memoryMb?: number;
}

interface Thread {
  worker: Worker;
  /** Settles once the thread has loaded the tools (or failed to start). */
  ready: Promise<void>;
}

/** Seconds as a person writes them: 120, 0.5. */
const seconds = (s: number): string => String(Number(s.toPrecision(3)));

export class McpPool {
  private readonly idle: Thread[] = [];
  private readonly live = new Set<Thread>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private calls = 0;
  private closed = false;

  constructor(private readonly options: PoolOptions) {}

  /** One thread started ahead of the first call. */
  warm(): void {
    if (this.idle.length === 0) this.idle.push(this.start());
  }

  private start(): Thread {
    const { memoryMb } = this.options;
    // stdout: true keeps a thread's writes off the protocol's stdout; they go to stderr.
    const worker = new Worker(this.options.entry, { argv: ['mcp-worker'], stdout: true, ...(memoryMb ? { resourceLimits: { maxOldGenerationSizeMb: memoryMb } } : {}) });
    worker.stdout.on('data', (d: Buffer) => process.stderr.write(d));
    const thread: Thread = {
      worker,
      ready: new Promise<void>((resolve, reject) => {
        const onMessage = (m: WorkerReply): void => {
          if ('ready' in m) {
            done();
            resolve();
          }
        };
        const onError = (e: Error): void => {
          done();
          reject(e);
        };
        const onExit = (code: number): void => {
          done();
          reject(new Error(`its worker thread exited with code ${code} as it started`));
        };
        const done = (): void => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
        };
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      }),
    };
    thread.ready.catch(() => {});
    this.live.add(thread);
    worker.once('exit', () => {
      this.live.delete(thread);
      const k = this.idle.indexOf(thread);
      if (k >= 0) this.idle.splice(k, 1);
    });
    return thread;
  }

  private async slot(): Promise<void> {
    const most = this.options.running ?? Math.max(4, availableParallelism());
    while (this.running >= most) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  /** `tool`'s answer (its JSON text) for `args`, or an Error whose message is the tool error's. */
  async run(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    if (this.closed) throw new Error('the server is closing');
    await this.slot();
    const thread = this.idle.pop() ?? this.start();
    try {
      await thread.ready;
    } catch (e) {
      this.release();
      void thread.worker.terminate();
      throw new Error(`${tool} could not start: ${(e as Error).message}`);
    }
    const id = ++this.calls;
    const { worker } = thread;
    return new Promise<string>((resolve, reject) => {
      const finish = (outcome: { text: string } | { error: string }, keep: boolean): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        if (keep && !this.closed && this.idle.length < (this.options.idle ?? 2)) this.idle.push(thread);
        else void worker.terminate();
        this.release();
        if ('text' in outcome) resolve(outcome.text);
        else reject(new Error(outcome.error));
      };
      const onMessage = (m: WorkerReply): void => {
        if ('ready' in m || m.id !== id) return;
        finish('text' in m ? { text: m.text } : { error: m.error }, true);
      };
      const onError = (e: Error & { code?: string }): void =>
        finish(
          {
            error:
              e.code === 'ERR_WORKER_OUT_OF_MEMORY'
                ? `${tool} ran out of memory on its worker thread and was stopped${this.options.memoryMb ? ` (each call may use ${this.options.memoryMb} MiB of heap)` : ''}; the server goes on`
                : `${tool} failed on its worker thread: ${e.message}; the server goes on`,
          },
          false,
        );
      const onExit = (code: number): void => finish({ error: `${tool} stopped: its worker thread exited (code ${code}); the server goes on` }, false);
      const onAbort = (): void => finish({ error: `${tool} was cancelled` }, false);
      const limit = this.options.timeLimit;
      const timer = setTimeout(() => finish({ error: `${tool} took longer than ${seconds(limit)} s and was stopped (${this.options.timeLimitHow})` }, false), limit * 1000);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort);
      worker.postMessage({ id, tool, args } satisfies WorkerCall);
    });
  }

  /** Ends every thread (calls in flight get no answer: the client is gone). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live].map((t) => t.worker.terminate()));
  }
}
