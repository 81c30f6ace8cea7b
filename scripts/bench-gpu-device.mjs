// Bundles the GPU figures for Dawn for Node into .gpu/run.mjs (and the stress planner's worker into
// .gpu/planner.mjs), to run on the device machine's GPU:
//   bash .gpu/enter.sh node .gpu/run.mjs    (device tool, carry [".gpu"])
// Copy the printed JSON into bench/results/h200-gpu.json; `npm run bench` shows it beside the local run.
import { bundleForDawn } from './dawn-bundle.mjs';

await bundleForDawn('bench/gpu/dawn-entry.ts', '.gpu/run.mjs');
await bundleForDawn('bench/gpu/planner-node-worker.ts', '.gpu/planner.mjs');
