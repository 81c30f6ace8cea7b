// Where a live run's allocator and planning run. A live run overlaps them with the GPU's
// submissions when they run in another thread (planner-worker.ts): the page's thread then
// only uploads and encodes, while the worker steps the next batches. LocalPlanner runs them in this
// thread (no worker: Node's tests, a page that cannot start one).
import type { BatchPlan, StressRunOptions } from './stress-run';
import { StressRun } from './stress-run';
import type { RequestStream } from '../../trace/stream/request-stream';

/** A stress run's allocator after the batches planned so far. */
export interface PlannerState {
  /** Index of the next request to apply. */
  position: number;
  done: boolean;
  ooms: number;
  liveBlocks: number;
  wordlessBlocks: number;
  transientBlocks: number;
}

/** Plans, and the state they leave the run in. */
export interface Planned {
  plans: BatchPlan[];
  state: PlannerState;
}

export interface Planner {
  /** Where it runs, in words for the panel: 'a worker' or 'the page's thread'. */
  readonly where: string;
  /** Applies up to `batches` batches of `batch` requests each and plans their GPU work (none once done). */
  step(batches: number, batch: number): Promise<Planned>;
  /** Work that verifies every live block (StressRun.closing). */
  closing(): Promise<Planned>;
  /** Work that rewrites every live block into a new arena (StressRun.rebuild). */
  rebuild(): Promise<Planned>;
  /** The test-only overlap fault (StressRun.faultOverlap). */
  setFault(on: boolean): Promise<void>;
}

/** What a planner knows of its run at start: its state before any request. */
export function stateOf(run: StressRun): PlannerState {
  return {
    position: run.position,
    done: run.done,
    ooms: run.ooms,
    liveBlocks: run.liveBlocks,
    wordlessBlocks: run.wordlessBlocks,
    transientBlocks: run.transientBlocks,
  };
}

/** `count` batches of `batch` requests stepped through `run`, with the state after them. */
export function stepRun(run: StressRun, count: number, batch: number): Planned {
  const plans: BatchPlan[] = [];
  while (plans.length < count && !run.done) plans.push(run.step(batch));
  return { plans, state: stateOf(run) };
}

/** The allocator and planning in this thread. */
export class LocalPlanner implements Planner {
  readonly where = "the page's thread";
  readonly run: StressRun;

  constructor(stream: RequestStream, options: StressRunOptions) {
    this.run = new StressRun(stream, options);
  }

  step(batches: number, batch: number): Promise<Planned> {
    return Promise.resolve(stepRun(this.run, batches, batch));
  }

  closing(): Promise<Planned> {
    return Promise.resolve({ plans: [this.run.closing()], state: stateOf(this.run) });
  }

  rebuild(): Promise<Planned> {
    return Promise.resolve({ plans: [this.run.rebuild()], state: stateOf(this.run) });
  }

  setFault(on: boolean): Promise<void> {
    this.run.faultOverlap = on;
    return Promise.resolve();
  }
}
