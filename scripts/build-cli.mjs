// Bundles the CLI (src/cli) into build/cli with esbuild: its entry, small, and the rest in a chunk that
// the entry loads once it has started reading the snapshot (src/cli/early-read.ts).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names change with their content: no earlier build's may stay beside this one's.
rmSync('build/cli', { recursive: true, force: true });

await build({
  entryPoints: { splitscope: 'src/cli/entry.ts' },
  outdir: 'build/cli',
  splitting: true,
  // Chunks beside the entry: main.ts finds the report page and dist/ relative to its own file.
  chunkNames: '[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
