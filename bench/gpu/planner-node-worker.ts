// The GPU stress planner's worker for Node (the GPU bench under Dawn on the device machine): the
// page's planner calls (src/gpu/stress/planner-api.ts) over worker_threads. Bundled into .gpu/planner.mjs.
import { parentPort } from 'node:worker_threads';
import { expose } from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { plannerApi } from '../../src/gpu/stress/planner-api';

expose(plannerApi(), nodeEndpoint(parentPort!));
