// The stress kernels in real Chromium (WebGPU on SwiftShader), word by word: fill and op write exactly the
// words their span tables say, cut into workgroup shares as work-groups.ts cuts them (long spans in
// parts, short ones gathered, starts off the lines), and nothing else; verify counts every word of a
// wrong tag. Mismatch counts alone cannot see a share cut wrong (fill and verify would cut it alike),
// so this reads the arena back. Fails without a WebGPU adapter.
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { rawImports } from '../../scripts/raw-import-plugin.mjs';
import { launch } from './chromium';

const ORIGIN = 'http://localhost:5998'; // served by request interception; localhost makes it a secure context
let browser: Browser;

beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser.close();
});

interface Wrong { count: number; first: string[] }

test('fill and op write exactly their spans\' words, in parts and gathered; verify counts every wrong word', async () => {
  const bundle = await build({
    entryPoints: [new URL('./fixtures/kernel-words.ts', import.meta.url).pathname],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    write: false,
    plugins: [rawImports],
    logLevel: 'warning',
  });
  const page = await browser.newPage();
  await page.route(`${ORIGIN}/**`, (route) =>
    route.request().url().endsWith('/kernel-words.js')
      ? route.fulfill({ contentType: 'text/javascript', body: bundle.outputFiles[0]!.text })
      : route.fulfill({ contentType: 'text/html', body: '<!doctype html><script src="/kernel-words.js"></script>' }),
  );
  await page.goto(`${ORIGIN}/`);
  const r = await page.evaluate<{ afterFill: Wrong; afterOps: Wrong; opMismatches: number; verifyRight: number; verifyWrong: number; words: number }>(
    'window.kernelWords',
  );
  expect(r.afterFill).toEqual({ count: 0, first: [] });
  expect(r.afterOps).toEqual({ count: 0, first: [] });
  expect(r.opMismatches).toBe(0);
  expect(r.verifyRight).toBe(0);
  expect(r.verifyWrong).toBe(r.words);
});
