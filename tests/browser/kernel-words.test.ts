// The stress kernels in real Chromium (WebGPU on SwiftShader), word by word: fill and op write exactly the
// words their span tables say, cut into workgroup shares as work-groups.ts cuts them (long spans in
// parts, short ones gathered, starts off the lines), and nothing else; verify counts every word of a
// wrong tag. Mismatch counts alone cannot see a share cut wrong (fill and verify would cut it alike),
// so this reads the arena back. Fails without a WebGPU adapter.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { launch } from './chromium';
import { openScriptPage } from './script-page';

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
  const page = await openScriptPage(browser, new URL('./fixtures/kernel-words.ts', import.meta.url).pathname, ORIGIN);
  const r = await page.evaluate<{ afterFill: Wrong; afterOps: Wrong; opMismatches: number; verifyRight: number; verifyWrong: number; words: number }>(
    'window.kernelWords',
  );
  expect(r.afterFill).toEqual({ count: 0, first: [] });
  expect(r.afterOps).toEqual({ count: 0, first: [] });
  expect(r.opMismatches).toBe(0);
  expect(r.verifyRight).toBe(0);
  expect(r.verifyWrong).toBe(r.words);
});
