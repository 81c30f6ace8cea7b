// npm run bench: bundle bench/main.ts (TypeScript) with esbuild, then run it in plain Node.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';

await build({
  entryPoints: ['bench/main.ts'],
  outfile: 'bench/out/main.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Libraries stay in node_modules (esbuild and playwright-core are used at run time as they are).
  packages: 'external',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const cli = spawnSync('node', ['scripts/build-cli.mjs'], { stdio: 'inherit' });
if (cli.status !== 0) process.exit(cli.status ?? 1);
const r = spawnSync('node', ['--expose-gc', 'bench/out/main.mjs', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
