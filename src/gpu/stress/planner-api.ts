// A GPU stress run's allocator and planning, as a worker's calls (planner.ts): the page's
// thread submits one group of batches to the GPU while the worker steps the next. Each answer's plans
// travel as transferred buffers. The browser's worker (planner-worker.ts) and Node's (the GPU bench on
// the device machine) expose the same calls.
import { transfer } from 'comlink';
import { stateOf, stepRun, type Planned } from './planner';
import { StressRun, type BatchPlan, type StressRunOptions } from './stress-run';
import type { RequestStream } from '../../trace/stream/request-stream';

/** The buffers of `planned`'s plans, handed over rather than copied (empty ones are shared between plans: copied). */
function handOver(planned: Planned): Planned {
  const buffers = new Set<ArrayBuffer>();
  const add = (plan: BatchPlan): void => {
    for (const t of [plan.freed, plan.fill, plan.op, plan.verify]) if (t.byteLength > 0) buffers.add(t.buffer);
  };
  planned.plans.forEach(add);
  return transfer(planned, [...buffers]);
}

export function plannerApi() {
  let run: StressRun | null = null;
  const current = (): StressRun => {
    if (!run) throw new Error('the planner has no run: open one first');
    return run;
  };
  return {
    open(stream: RequestStream, options: StressRunOptions): void {
      run = new StressRun(stream, options);
    },
    step(batches: number, batch: number): Planned {
      return handOver(stepRun(current(), batches, batch));
    },
    closing(): Planned {
      return handOver({ plans: [current().closing()], state: stateOf(current()) });
    },
    rebuild(): Planned {
      return handOver({ plans: [current().rebuild()], state: stateOf(current()) });
    },
    setFault(on: boolean): void {
      current().faultOverlap = on;
    },
  };
}

export type PlannerApi = ReturnType<typeof plannerApi>;
