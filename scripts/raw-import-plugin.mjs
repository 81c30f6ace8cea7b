// esbuild plugin for Vite's `?raw` imports (the WGSL sources): the file's text as a string.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

export const rawImports = {
  name: 'raw-imports',
  setup(build) {
    build.onResolve({ filter: /\?raw$/ }, (args) => ({
      path: resolve(dirname(args.importer), args.path.slice(0, -'?raw'.length)),
      namespace: 'raw',
    }));
    build.onLoad({ filter: /.*/, namespace: 'raw' }, async (args) => ({ contents: await readFile(args.path, 'utf8'), loader: 'text' }));
  },
};
