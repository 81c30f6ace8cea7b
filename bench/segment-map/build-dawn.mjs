// Bundles bench/segment-map/dawn-entry.ts into .gpu/segment-map.mjs for the device machine:
//   node bench/segment-map/build-dawn.mjs, then (device tool, carry [".gpu"]) bash .gpu/enter.sh node .gpu/segment-map.mjs
import { bundleForDawn } from '../../scripts/dawn-bundle.mjs';

await bundleForDawn('bench/segment-map/dawn-entry.ts', '.gpu/segment-map.mjs');
