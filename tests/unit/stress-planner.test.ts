// The GPU stress planner's calls (what the page's planner worker answers) plan exactly what a
// StressRun in this thread plans, batch for batch, and the state they report is the run's.
import { expect, test } from 'vitest';
import { GiB, MiB } from '../../src/allocator/constants';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { LocalPlanner } from '../../src/gpu/stress/planner';
import { plannerApi } from '../../src/gpu/stress/planner-api';
import { transformerTraining } from '../../src/trace/stream/workloads';

test('the planner worker\'s calls plan what a run in this thread plans', async () => {
  const stream = transformerTraining.generate({ layers: 4 });
  const options = { config: DEFAULT_CONFIG, deviceBytes: 80 * GiB, arenaWords: (64 * MiB) / 4, plan: true };
  const api = plannerApi();
  expect(() => api.step(1, 64)).toThrow(/no run/);
  api.open(stream, options);
  const local = new LocalPlanner(stream, options);
  let batches = 0;
  for (;;) {
    const [a, b] = [api.step(7, 64), await local.step(7, 64)];
    expect(a).toEqual(b);
    batches += a.plans.length;
    if (a.state.done) break;
  }
  expect(batches).toBe(Math.ceil(stream.length / 64));
  expect(api.closing()).toEqual(await local.closing());
  expect(api.rebuild()).toEqual(await local.rebuild());
  expect(api.step(3, 64).plans).toEqual([]);
});
