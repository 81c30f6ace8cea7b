// A blank page in Chromium that runs one TypeScript entry, bundled by esbuild (WGSL imported as text),
// served by request interception on a localhost origin (a secure context, so WebGPU is offered). For
// code that drives the GPU modules directly, without the app: the kernel tests and the GPU bench.
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { rawImports } from '../../scripts/raw-import-plugin.mjs';

/** Opens a page on `origin` running the bundle of `entry` (a path); what it leaves on window is the caller's to read. */
export async function openScriptPage(browser: Browser, entry: string, origin: string): Promise<Page> {
  const bundle = await build({ entryPoints: [entry], bundle: true, format: 'iife', target: 'es2022', write: false, plugins: [rawImports], logLevel: 'warning' });
  const script = bundle.outputFiles[0]!.text;
  const page = await browser.newPage();
  await page.route(`${origin}/**`, (route) =>
    route.request().url().endsWith('/entry.js')
      ? route.fulfill({ contentType: 'text/javascript', body: script })
      : route.fulfill({ contentType: 'text/html', body: '<!doctype html><script src="/entry.js"></script>' }),
  );
  await page.goto(`${origin}/`);
  return page;
}
