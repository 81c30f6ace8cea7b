// Bundles a bench entry for Dawn for Node on the device machine (.gpu/, prepared by
// ../shared/tools/webgpu-on-device.sh): one file, "webgpu" left to the machine, WGSL inlined.
import { build } from 'esbuild';
import { rawImports } from './raw-import-plugin.mjs';

export async function bundleForDawn(entry, outfile) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['webgpu'],
    plugins: [rawImports],
    logLevel: 'warning',
  });
  console.log(`wrote ${outfile}`);
}
