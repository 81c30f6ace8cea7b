// npm run bench: bundle bench/main.ts (TypeScript) with esbuild, then run it in plain Node.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

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
// The browser benchmarks draw WebGPU canvases, which needs a display: without one, Xvfb.
const run = ['node', '--expose-gc', 'bench/out/main.mjs', ...process.argv.slice(2)];
const headless = !process.env.DISPLAY && existsSync('/usr/bin/xvfb-run');
const r = headless
  ? spawnSync('xvfb-run', ['-a', '--server-args=-screen 0 1920x1080x24', ...run], { stdio: 'inherit' })
  : spawnSync(run[0], run.slice(1), { stdio: 'inherit' });
process.exit(r.status ?? 1);
