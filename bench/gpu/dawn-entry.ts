// Bundled into .gpu/run.mjs by scripts/bench-gpu-device.mjs for the device machine: Dawn for Node
// provides navigator.gpu; the figures go to $OUT/gpu-figures.json and stdout.
import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { create, globals } from 'webgpu';
import type { PlannerFactory } from '../../src/gpu/stress/live-run';
import { PlannerWorker, WorkerPlanner } from '../../src/state/planner-client';
import { measureGpu } from './gpu-figures';

// As on the page, a run with stress on plans in a worker kept from run to run (.gpu/planner.mjs,
// beside this file).
const worker = new Worker(new URL('./planner.mjs', import.meta.url));
worker.unref();
const plannerWorker = new PlannerWorker(nodeEndpoint(worker));
const makePlanner: PlannerFactory = (stream, options) => new WorkerPlanner(plannerWorker, stream, options);

Object.assign(globalThis, globals);
Object.defineProperty(globalThis, 'navigator', { value: { gpu: create([]) }, configurable: true });
const figures = await measureGpu({ arenaBytes: 2 ** 31 - 4, repeat: 50, makePlanner });
const json = JSON.stringify(figures, null, 2);
console.log(json);
if (process.env.OUT) writeFileSync(`${process.env.OUT}/gpu-figures.json`, json);
process.exit(0);
