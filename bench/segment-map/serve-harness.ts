// Bundles the segment-map harness page with esbuild and serves it to a Playwright page by request
// interception on http://localhost:5999 (a secure context, so WebGPU is offered).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { rawImports } from '../../scripts/raw-import-plugin.mjs';

export const HARNESS_ORIGIN = 'http://localhost:5999';
const ROOT = process.cwd(); // npm and vitest run from the project root

let bundled: Promise<{ js: string; css: string }> | null = null;

function bundle(): Promise<{ js: string; css: string }> {
  bundled ??= build({
    entryPoints: [join(ROOT, 'bench/segment-map/harness-entry.tsx')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    write: false,
    outdir: '/harness',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [rawImports],
    logLevel: 'warning',
  }).then((out) => ({
    js: out.outputFiles.find((f) => f.path.endsWith('.js'))!.text,
    css: out.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '',
  }));
  return bundled;
}

/** Routes the harness (and tests/fixtures/*) on `page`; then `page.goto(HARNESS_ORIGIN + '/?layout=...')`. */
export async function serveHarness(page: Page): Promise<void> {
  const { js, css } = await bundle();
  await page.route(`${HARNESS_ORIGIN}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === '/harness.js') return route.fulfill({ contentType: 'text/javascript', body: js });
    if (path === '/harness.css') return route.fulfill({ contentType: 'text/css', body: css });
    if (path.startsWith('/fixtures/')) return route.fulfill({ contentType: 'application/octet-stream', body: readFileSync(join(ROOT, 'tests/fixtures', path.slice('/fixtures/'.length).replace(/[^\w.=+-]/g, ''))) });
    return route.fulfill({
      contentType: 'text/html',
      body: '<!doctype html><meta charset="utf-8"><title>segment map</title><link rel="stylesheet" href="/harness.css"><style>:root{color-scheme:light dark}</style><body><script type="module" src="/harness.js"></script></body>',
    });
  });
}
