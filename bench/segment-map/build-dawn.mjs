// Bundles bench/segment-map/dawn-entry.ts into .gpu/segment-map.mjs (prepared by
// ../shared/tools/webgpu-on-device.sh) for the device machine:
//   node bench/segment-map/build-dawn.mjs, then (device tool, carry [".gpu"]) bash .gpu/enter.sh node .gpu/segment-map.mjs
import { build } from 'esbuild';
import { rawImports } from '../../scripts/raw-import-plugin.mjs';

await build({
  entryPoints: ['bench/segment-map/dawn-entry.ts'],
  outfile: '.gpu/segment-map.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['webgpu'],
  plugins: [rawImports],
  logLevel: 'warning',
});
console.log('wrote .gpu/segment-map.mjs');
