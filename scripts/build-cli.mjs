// Bundles the Node entry points (src/cli) into build/cli with esbuild: one file, fast start-up.
import { build } from 'esbuild';

await build({
  entryPoints: { splitscope: 'src/cli/main.ts' },
  outdir: 'build/cli',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
