#!/usr/bin/env node
// The CLI lives in build/cli (bundled by `npm run build:cli`, which `npm ci` runs as `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const bundle = fileURLToPath(new URL('../build/cli/splitscope.mjs', import.meta.url));
if (!existsSync(bundle)) {
  console.error('splitscope: the CLI is not built yet; run `npm run build:cli` (npm ci does it) and try again.');
  process.exit(2);
}
await import(pathToFileURL(bundle).href);
