// One page of splitscope in real Chromium per test file, opened before its tests and closed after.
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, inject } from 'vitest';
import { launch } from './chromium';

export const SHOTS = 'test-results/screenshots';

export interface OpenPage {
  /** Set once beforeAll has run. */
  page: Page;
  /** Uncaught errors the page threw. */
  errors: string[];
}

export function openPage(): OpenPage {
  const session = { page: null as unknown as Page, errors: [] as string[] };
  let browser: Browser | undefined;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launch();
    session.page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    session.page.on('pageerror', (e) => session.errors.push(e.message));
    await session.page.goto(inject('baseUrl'));
    await session.page.waitForFunction(`'splitscope' in window`);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return session;
}
