// The page's side of a GPU stress planner worker (gpu/stress/planner-worker.ts): a Planner whose calls go
// to the worker through comlink. The stream goes once, in shared memory where the page can share it.
import { wrap, type Endpoint, type Remote } from 'comlink';
import type { Planned, Planner } from '../gpu/stress/planner';
import type { StressRunOptions } from '../gpu/stress/stress-run';
import type { RequestStream } from '../trace/stream/request-stream';
import type { PlannerApi } from '../gpu/stress/planner-api';
import { sharedStream } from '../worker/shared-stream';
import { startWorker } from './workers';

/** The page's planner worker, kept from run to run (a new one would run its first batches cold, unoptimized). */
let pageWorker: PlannerWorker | null = null;

/** A planner in the page's planner worker (workers.ts), started on first use and after a failure. */
export function workerPlanner(stream: RequestStream, options: StressRunOptions): Planner {
  if (!pageWorker) {
    const worker = startWorker('planner');
    const failed = new Promise<never>((_, reject) => {
      worker.addEventListener('error', (e) => {
        pageWorker = null;
        worker.terminate();
        reject(new Error(e.message || 'its worker failed'));
      });
    });
    pageWorker = new PlannerWorker(worker, failed);
  }
  return new WorkerPlanner(pageWorker, stream, options);
}

/** A worker answering planner-api's calls, one run after another. */
export class PlannerWorker {
  readonly remote: Remote<PlannerApi>;

  /** `failed` rejects if the worker fails (a call would never be answered). */
  constructor(
    endpoint: Endpoint,
    readonly failed: Promise<never> = new Promise<never>(() => {}),
  ) {
    failed.catch(() => undefined); // seen through the calls
    this.remote = wrap<PlannerApi>(endpoint);
  }
}

/** One run's planner in a planner worker: opening it replaces the worker's last run (calls keep their order). */
export class WorkerPlanner implements Planner {
  readonly where = 'a worker';
  private readonly opened: Promise<void>;

  constructor(
    private readonly worker: PlannerWorker,
    stream: RequestStream,
    options: StressRunOptions,
  ) {
    this.opened = worker.remote.open(sharedStream(stream), options);
  }

  step(batches: number, batch: number): Promise<Planned> {
    return this.call(() => this.worker.remote.step(batches, batch));
  }

  closing(): Promise<Planned> {
    return this.call(() => this.worker.remote.closing());
  }

  rebuild(): Promise<Planned> {
    return this.call(() => this.worker.remote.rebuild());
  }

  setFault(on: boolean): Promise<void> {
    return this.call(() => this.worker.remote.setFault(on));
  }

  /**
   * Calls the worker now (the worker takes calls in order, so after the run is open), so that it
   * steps while this thread goes on; answers once the open did, or fails with the worker.
   */
  private call<T>(f: () => Promise<T>): Promise<T> {
    const answer = f();
    answer.catch(() => undefined); // seen through the race below
    return Promise.race([this.opened.then(() => answer), this.worker.failed]);
  }
}
