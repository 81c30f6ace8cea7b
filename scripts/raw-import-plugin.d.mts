import type { Plugin } from 'esbuild';
export const rawImports: Plugin;
