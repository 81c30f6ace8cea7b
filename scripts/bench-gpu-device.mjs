// Bundles the GPU figures for Dawn for Node into .gpu/run.mjs (prepared by
// ../shared/tools/webgpu-on-device.sh), to run on the device machine's GPU:
//   bash .gpu/enter.sh node .gpu/run.mjs    (device tool, carry [".gpu"])
// Copy the printed JSON into bench/results/h200-gpu.json; `npm run bench` shows it beside the local run.
import { build } from 'esbuild';
import { rawImports } from './raw-import-plugin.mjs';

await build({
  entryPoints: ['bench/gpu/dawn-entry.ts'],
  outfile: '.gpu/run.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['webgpu'],
  plugins: [rawImports],
  logLevel: 'warning',
});
console.log('wrote .gpu/run.mjs');
