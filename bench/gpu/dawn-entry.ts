// Bundled into .gpu/run.mjs by scripts/bench-gpu-device.mjs for the device machine: Dawn for Node
// provides navigator.gpu; the figures go to $OUT/gpu-figures.json and stdout.
import { writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { measureGpu } from './gpu-figures';

Object.assign(globalThis, globals);
Object.defineProperty(globalThis, 'navigator', { value: { gpu: create([]) }, configurable: true });
const figures = await measureGpu({ arenaBytes: 2 ** 31 - 4, repeat: 50 });
const json = JSON.stringify(figures, null, 2);
console.log(json);
if (process.env.OUT) writeFileSync(`${process.env.OUT}/gpu-figures.json`, json);
process.exit(0);
