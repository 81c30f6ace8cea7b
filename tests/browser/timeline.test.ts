// The timeline alone in real Chromium: a harness page (bundled here with esbuild, served by request
// interception) renders it over a synthetic 470k-request series, with the cursor and play state held by
// a wrapper as the page's store would.
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launch } from './chromium';
import { allocatedColour, pixelsOfColour } from './series-pixels';

const ROOT = resolve(__dirname, '../..');
const SHOTS = 'test-results/screenshots';
const ORIGIN = 'http://localhost:5999';
const N = 470_000;

// The harness entry. Page-side code lives in strings: vitest rewrites test-file functions with helpers the page lacks.
const HARNESS = `
import { createRoot } from 'react-dom/client';
import { useEffect, useState } from 'react';
import { Timeline } from './src/views/Timeline';

const GiB = 2 ** 30;
function synthetic(n) {
  const allocated = new Float64Array(n), reserved = new Float64Array(n), active = new Float64Array(n);
  const ooms = [], retries = [];
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  let peak = 0;
  for (let i = 0; i < n; i++) {
    const step = i % 9000; // training steps: activations build up, then drop
    const a = 1.5 * GiB + (step / 9000) * 6 * GiB * (1 + 0.3 * Math.sin(i / 60000)) + rand() * 0.4 * GiB;
    allocated[i] = Math.round(a);
    active[i] = allocated[i];
    peak = Math.max(peak * (i % 120000 === 0 ? 0.7 : 1), a + 1.2 * GiB);
    reserved[i] = Math.ceil(peak / (2 * 2 ** 20)) * 2 * 2 ** 20;
    if (i > 300000 && i < 330000 && step > 8900 && rand() < 0.05) ooms.push(i);
    if (step === 8990 && i > 150000) retries.push(i);
  }
  return { allocated, reserved, active, ooms: Int32Array.from(ooms), retries: Int32Array.from(retries) };
}
function small() {
  const s = synthetic(40);
  s.ooms = Int32Array.from([31]);
  s.retries = Int32Array.from([30]);
  return s;
}

function App() {
  const [series, setSeries] = useState(() => synthetic(${N}));
  const [cursor, setCursor] = useState(${N} - 1);
  const [playing, setPlaying] = useState(false);
  const [width, setWidth] = useState(860);
  const total = series ? series.allocated.length : 0;
  useEffect(() => {
    if (!playing) return;
    const id = setInterval(() => setCursor((c) => Math.min(total - 1, c + 97)), 16);
    return () => clearInterval(id);
  }, [playing, total]);
  window.harness = {
    small: () => { setSeries(small()); setCursor(20); },
    scaled: (f) => { const s = synthetic(${N}); for (const k of ['allocated', 'reserved', 'active']) s[k] = s[k].map((v) => v * f); setSeries(s); },
    none: () => { setSeries(null); setCursor(-1); },
    width: setWidth,
  };
  return (
    <div style={{ width: width + 'px', margin: '16px', padding: '8px 12px', border: '1px solid color-mix(in srgb, currentColor 20%, transparent)', borderRadius: '6px' }}>
      <Timeline series={series} cursor={cursor} onCursor={setCursor} playing={playing} onPlayingChange={setPlaying} />
    </div>
  );
}
createRoot(document.getElementById('root')).render(<App />);
`;

let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const bundle = await build({
    stdin: { contents: HARNESS, resolveDir: ROOT, loader: 'tsx', sourcefile: 'timeline-harness.tsx' },
    bundle: true,
    format: 'iife',
    target: 'es2022',
    jsx: 'automatic',
    loader: { '.css': 'empty' }, // the stylesheet goes into the page below, as Vite would inject it
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'warning',
  });
  const script = bundle.outputFiles[0]!.text;
  const css = readFileSync(`${ROOT}/src/views/timeline.css`, 'utf8');
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>:root{color-scheme:light dark;font-family:system-ui,sans-serif}body{margin:0}${css}</style></head>
    <body><div id="root"></div><script src="/harness.js"></script></body></html>`;
  browser = await launch();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route(`${ORIGIN}/**`, (route) =>
    route.request().url().endsWith('/harness.js')
      ? route.fulfill({ contentType: 'text/javascript', body: script })
      : route.fulfill({ contentType: 'text/html', body: html }),
  );
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction(`document.querySelector('.tl-allocated')?.getAttribute('d')`);
});

afterAll(async () => {
  await browser?.close();
});

const slider = () => page.getByRole('slider', { name: 'Cursor (request)' });
const now = async () => Number(await slider().getAttribute('aria-valuenow'));
const frame = () => page.evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))`);
const blur = () => page.evaluate(`document.activeElement && document.activeElement.blur()`);

test('an accessible slider over the requests, inside a group named Timeline', async () => {
  const group = page.getByRole('group', { name: 'Timeline' });
  expect(await group.count()).toBe(1);
  expect(await group.getByRole('slider').count()).toBe(1);
  // Requests are numbered from 0, as everywhere (the CLI's --until, links).
  expect(await slider().getAttribute('aria-valuemin')).toBe('0');
  expect(await slider().getAttribute('aria-valuemax')).toBe(String(N - 1));
  expect(await now()).toBe(N - 1);
  expect(await page.getByRole('slider', { name: /max_split/ }).count()).toBe(0);
  expect(await page.getByText(`request ${(N - 1).toLocaleString('en-US')} / ${N.toLocaleString('en-US')}`).count()).toBe(1);
  await page.screenshot({ path: `${SHOTS}/timeline-light.png` });
});

test('clicking the chart moves the cursor near the clicked request; dragging follows', async () => {
  const plot = page.locator('.tl-plot-area .tl-x .domain'); // the x axis line spans the plot exactly
  const box = (await plot.boundingBox())!;
  const perPixel = N / box.width;
  await page.mouse.click(box.x + box.width * 0.3, box.y - 40);
  expect(Math.abs((await now()) - 0.3 * N)).toBeLessThan(2 * perPixel);
  await page.mouse.move(box.x + box.width * 0.5, box.y - 40);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y - 60, { steps: 5 });
  await page.mouse.move(box.x + box.width * 0.72, box.y - 60, { steps: 5 });
  expect(Math.abs((await now()) - 0.72 * N)).toBeLessThan(2 * perPixel);
  await page.mouse.up();
  await frame();
  // The cursor line is drawn where the cursor is.
  const line = (await page.locator('.tl-cursor').boundingBox())!;
  expect(Math.abs(line.x - (box.x + box.width * 0.72))).toBeLessThan(3);
  await page.screenshot({ path: `${SHOTS}/timeline-scrubbed.png` });
});

test('with the slider focused its own keys step one request, not two', async () => {
  await slider().focus();
  const before = await now();
  await page.keyboard.press('ArrowRight');
  expect(await now()).toBe(before + 1);
  await page.keyboard.press('ArrowLeft');
  expect(await now()).toBe(before);
});

test('arrow keys step one request when nothing is focused; Shift 1%, Home and End jump', async () => {
  await blur();
  const before = await now();
  await page.keyboard.press('ArrowRight');
  expect(await now()).toBe(before + 1);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  expect(await now()).toBe(before - 1);
  await page.keyboard.press('Shift+ArrowRight');
  expect(await now()).toBe(before - 1 + N / 100);
  await page.keyboard.press('Home');
  expect(await now()).toBe(0);
  await page.keyboard.press('End');
  expect(await now()).toBe(N - 1);
});

test('keys typed into a text field do not move the cursor', async () => {
  await page.evaluate(`(() => { const i = document.createElement('input'); i.id = 'field'; document.body.append(i); })()`);
  const before = await now();
  await page.focus('#field');
  await page.keyboard.press('ArrowLeft');
  expect(await now()).toBe(before);
  await page.evaluate(`document.getElementById('field').remove()`);
});

test('the buttons step back and forward; play and pause', async () => {
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+ArrowRight'); // ArrowRight from the body: the input is gone
  const before = await now();
  await page.getByRole('button', { name: 'Step back' }).click();
  expect(await now()).toBe(before - 1);
  await page.getByRole('button', { name: 'Step forward' }).click();
  await page.getByRole('button', { name: 'Step forward' }).click();
  expect(await now()).toBe(before + 1);
  await page.getByRole('button', { name: 'Play' }).click();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  await page.waitForFunction(`Number(document.querySelector('[role=slider]').getAttribute('aria-valuenow')) > ${before + 500}`);
  await page.screenshot({ path: `${SHOTS}/timeline-playing.png` });
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Play' }).waitFor();
  const paused = await now();
  await frame();
  expect(await now()).toBe(paused);
});

test('OOMs and retries are marked; 470k points stay a few SVG nodes', async () => {
  const ooms = page.locator('.tl-ooms');
  expect(Number(await ooms.getAttribute('data-count'))).toBeGreaterThan(0);
  expect((await ooms.getAttribute('d'))!.length).toBeGreaterThan(0);
  expect(Number(await page.locator('.tl-retries').getAttribute('data-count'))).toBeGreaterThan(0);
  const nodes = await page.evaluate<number>(`document.querySelectorAll('.timeline svg *').length`);
  expect(nodes).toBeLessThan(5000);
  // Each series is one path of at most ~2 points per pixel column.
  const d = (await page.locator('.tl-allocated').getAttribute('d'))!;
  const width = (await page.locator('.timeline svg').boundingBox())!.width;
  expect(d.split(/[ML]/).length).toBeLessThan(2 * width + 4);
  console.log(`timeline: ${nodes} SVG nodes for ${N.toLocaleString('en-US')} requests; allocated path ${d.length} characters`);
});

test('resizing redraws once per frame; redraw time for 470k points', async () => {
  await page.evaluate(`performance.clearMeasures('splitscope:timeline-draw')`);
  for (const w of [1100, 700, 1000, 860]) {
    await page.evaluate(`window.harness.width(${w})`);
    await frame();
  }
  const widthNow = (await page.locator('.timeline svg').boundingBox())!.width;
  expect(Number(await page.locator('.timeline svg').getAttribute('width'))).toBe(Math.floor(widthNow));
  const draws = await page.evaluate<number[]>(`performance.getEntriesByName('splitscope:timeline-draw').map((e) => e.duration)`);
  expect(draws.length).toBeGreaterThanOrEqual(4);
  // Cursor-only redraws (the series is cached between frames).
  await page.evaluate(`performance.clearMeasures('splitscope:timeline-draw')`);
  await blur();
  for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowLeft');
  await frame();
  const cursorDraws = await page.evaluate<number[]>(`performance.getEntriesByName('splitscope:timeline-draw').map((e) => e.duration)`);
  const ms = (xs: number[]) => `median ${[...xs].sort((a, b) => a - b)[xs.length >> 1]!.toFixed(2)} ms, max ${Math.max(...xs).toFixed(2)} ms`;
  console.log(`timeline redraw, ${N.toLocaleString('en-US')} points: full (resize) ${ms(draws)}; cursor only ${ms(cursorDraws)} (${cursorDraws.length} frames for 10 key presses)`);
});

test('a new series redraws the axes only when their ticks move', async () => {
  const ticks = () => page.evaluate<string>(`[...document.querySelectorAll('.tl-y .tick text')].map((t) => t.textContent).join(' ')`);
  const before = await ticks();
  const d = await page.locator('.tl-allocated').getAttribute('d');
  await page.evaluate(`window.harness.scaled(4)`);
  await page.waitForFunction(`document.querySelector('.tl-allocated').getAttribute('d') !== ${JSON.stringify(d)}`);
  const larger = await ticks();
  expect(larger).not.toBe(before);
  // Nearly the same peak: the same ticks, the paths redrawn all the same.
  const d4 = await page.locator('.tl-allocated').getAttribute('d');
  await page.evaluate(`(() => {
    window.axisChanges = 0;
    const seen = new MutationObserver((records) => (window.axisChanges += records.length));
    for (const g of document.querySelectorAll('.tl-x, .tl-y, .tl-grid')) seen.observe(g, { attributes: true, childList: true, subtree: true, characterData: true });
  })()`);
  await page.evaluate(`window.harness.scaled(4.01)`);
  await page.waitForFunction(`document.querySelector('.tl-allocated').getAttribute('d') !== ${JSON.stringify(d4)}`);
  expect(await ticks()).toBe(larger);
  expect(await page.evaluate<number>('window.axisChanges')).toBe(0);
  await page.evaluate(`window.harness.scaled(1)`);
  await page.waitForFunction(`document.querySelector('.tl-allocated').getAttribute('d') === ${JSON.stringify(d)}`);
  expect(await ticks()).toBe(before);
});

test('dark theme: the series canvas is painted again in its colours', async () => {
  const light = await allocatedColour(page);
  expect(await pixelsOfColour(page, light)).toBeGreaterThan(100);
  await page.emulateMedia({ colorScheme: 'dark' });
  await frame();
  const dark = await allocatedColour(page);
  expect(dark).not.toBe(light);
  expect(await pixelsOfColour(page, dark)).toBeGreaterThan(100);
  expect(await pixelsOfColour(page, light)).toBe(0);
  await page.screenshot({ path: `${SHOTS}/timeline-dark.png` });
  await page.emulateMedia({ colorScheme: 'light' });
  await frame();
  expect(await pixelsOfColour(page, light)).toBeGreaterThan(100);
});

test('fewer requests than pixels, and no series at all', async () => {
  await page.evaluate(`window.harness.small()`);
  await page.waitForFunction(`document.querySelector('[role=slider]').getAttribute('aria-valuemax') === '39'`);
  await frame();
  expect(await now()).toBe(20);
  expect(Number(await page.locator('.tl-ooms').getAttribute('data-count'))).toBe(1);
  await page.screenshot({ path: `${SHOTS}/timeline-small.png` });
  await page.evaluate(`window.harness.none()`);
  await page.getByText('No requests yet').waitFor();
  expect(await page.getByRole('button', { name: 'Step forward' }).isDisabled()).toBe(true);
  await page.screenshot({ path: `${SHOTS}/timeline-empty.png` });
});

test('no uncaught errors on the page', () => {
  expect(errors).toEqual([]);
});
