// The page outside the browser tab's usual road: `splitscope report`'s file opened from file:// with the
// network off shows the same stats as the CLI (its what-if and the views included), and `splitscope
// open` serves the page with the file already loaded.
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launch } from './chromium';
import { SHOTS as shots } from './open-page';

const FILE = 'tests/fixtures/job/rank_1.pickle.gz';
const tmp = mkdtempSync(join(tmpdir(), 'splitscope-pages-'));
let browser: Browser;
let server: ChildProcess | null = null;

function cliStats(...args: string[]): Record<string, number> {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', FILE, ...args, '--json'], { encoding: 'utf8' })).stats;
}

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(`window.splitscope && document.querySelector('.source-line')?.textContent.includes('rank_1.pickle.gz')`, undefined, { timeout: 60_000 });
  await page.evaluate('window.splitscope.ready()');
}

beforeAll(async () => {
  expect(spawnSync('npm', ['run', 'build:cli'], { encoding: 'utf8' }).status).toBe(0);
  browser = await launch();
});

afterAll(async () => {
  server?.kill();
  await browser?.close();
});

test('a report opened from file:// offline shows the CLI’s stats under its --conf, with the views working', async () => {
  const out = join(tmp, 'rank_1.report.html');
  const r = spawnSync(process.execPath, ['bin/splitscope.mjs', 'report', FILE, '-o', out, '--conf', 'max_split_size_mb:64'], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^wrote .*rank_1\.report\.html/);
  const context = await browser.newContext({ offline: true, viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Nothing but the file itself may load: every other request fails the test.
  const requests: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith('file:') && !req.url().startsWith('blob:') && !req.url().startsWith('data:')) requests.push(req.url());
  });
  await page.goto(pathToFileURL(out).href);
  await ready(page);
  expect(await page.evaluate('window.splitscope.stats()')).toEqual(cliStats('--conf', 'max_split_size_mb:64'));
  expect(await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF').inputValue()).toBe('max_split_size_mb:64');
  // The what-if and the views: back to the recorded config, the stack view, the sweep.
  await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF').fill('');
  await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF').press('Enter');
  await page.evaluate('window.splitscope.ready()');
  expect(await page.evaluate('window.splitscope.stats()')).toEqual(cliStats());
  await page.getByText('Which code holds the memory').click();
  // The panel asks for its tree on <details>' toggle event, which comes a task after the click: a
  // ready() right after the click can resolve before it (it did whenever no WebGPU frame delayed it).
  await expect
    .poll(async () => ((await page.evaluate('window.splitscope.ready().then(() => window.splitscope.stacks())')) as { sites: unknown[] }).sites.length, { timeout: 15_000 })
    .toBeGreaterThan(3);
  const sweep = (await page.evaluate('window.splitscope.sweep()')) as { rows: unknown[] };
  expect(sweep.rows.every((row) => row !== null)).toBe(true);
  expect(await page.evaluate('window.splitscope.gpu().adapter'), 'GPU stress runs on a WebGPU adapter in the report too (this test needs one)').not.toBeNull();
  expect(errors).toEqual([]);
  expect(requests).toEqual([]);
  await page.screenshot({ path: `${shots}/report-file-url.png` });
  await context.close();
});

test('splitscope open serves the page on loopback with the file loaded', async () => {
  const proc = spawn(process.execPath, ['bin/splitscope.mjs', 'open', FILE, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  server = proc;
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    proc.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /is open at (http:\/\/127\.0\.0\.1:\d+\/\?open=\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', (code) => reject(new Error(`splitscope open exited ${code}`)));
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(url);
  await ready(page);
  expect(await page.evaluate('window.splitscope.stats()')).toEqual(cliStats());
  // Served with COOP and COEP: the workers share one copy of the request stream.
  expect(await page.evaluate('crossOriginIsolated')).toBe(true);
  // The address keeps the view's link, not the launch.
  expect(new URL(page.url()).searchParams.get('open')).toBeNull();
  await page.close();
});
