// The segment map in real Chromium, on its own harness page (bench/segment-map/harness-entry.tsx,
// bundled by esbuild): the WebGPU path draws, hover shows a block's details, keys and the wheel zoom.
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HARNESS_ORIGIN, serveHarness } from '../../bench/segment-map/serve-harness';
import { formatSize } from '../../src/allocator/format-size';
import { PALETTE } from '../../src/gpu/segment-map/segment-map-palette';
import { launch } from './chromium';

const SHOTS = 'test-results/screenshots';

let browser: Browser;
const errors: string[] = [];

async function open(query: string, options: { dark?: boolean; noGpu?: boolean } = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, colorScheme: options.dark ? 'dark' : 'light' });
  page.on('pageerror', (e) => errors.push(e.message));
  if (options.noGpu) await page.addInitScript(() => Object.defineProperty(navigator, 'gpu', { value: undefined }));
  await serveHarness(page);
  await page.goto(`${HARNESS_ORIGIN}/?${query}`);
  await page.evaluate(() => window.segmentMapHarness.ready);
  return page;
}

/** How many pixels of the canvas screenshot are close to each palette colour (decoded by the page itself). */
async function colourCounts(page: Page): Promise<number[]> {
  const png = (await page.locator('canvas.segment-map-canvas').screenshot()).toString('base64');
  const targets = PALETTE.slice(0, 4).map((p) => p.rgba.slice(0, 3).map((c) => Math.round(c * 255)));
  return page.evaluate(
    async ([b64, targets]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const counts = targets.map(() => 0);
      for (let i = 0; i < d.length; i += 4) {
        targets.forEach((t, k) => {
          if (Math.abs(d[i]! - t[0]!) + Math.abs(d[i + 1]! - t[1]!) + Math.abs(d[i + 2]! - t[2]!) < 24) counts[k]!++;
        });
      }
      return counts;
    },
    [png, targets] as const,
  );
}

const domain = (page: Page): Promise<number[]> =>
  page.locator('g.segment-map-axis').getAttribute('data-domain').then((d) => (d ?? '').split(',').map(Number));

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe('segment map', () => {
  test('WebGPU draws the transformer workload; hover, pin, zoom and pan', async () => {
    const page = await open('layout=transformer');
    const adapter = await page.evaluate(async () => !!(await navigator.gpu?.requestAdapter()));
    expect(adapter, 'WebGPU has no adapter in this Chromium').toBe(true);
    const canvas = page.locator('canvas.segment-map-canvas');
    await expect.poll(() => canvas.getAttribute('data-backend')).toBe('webgpu');
    const [allocated, cached] = await colourCounts(page);
    expect(allocated).toBeGreaterThan(2000);
    expect(cached).toBeGreaterThan(50);
    await page.screenshot({ path: `${SHOTS}/segment-map-transformer.png` });

    // Hover the largest allocated block: the tooltip gives its size as format_size does.
    const { block, size } = await page.evaluate(() => {
      const l = window.segmentMapHarness.layout!;
      let best = -1;
      for (let b = 0; b < l.blockSize.length; b++) if (l.blockState[b] === 0 && (best < 0 || l.blockSize[b]! > l.blockSize[best]!)) best = b;
      return { block: best, size: l.blockSize[best]! };
    });
    const at = await page.evaluate((b) => window.segmentMapHarness.blockCenter(b), block);
    await page.mouse.move(at.x, at.y);
    const tip = page.locator('.segment-map-tip');
    await expect.poll(() => tip.getAttribute('data-block')).toBe(String(block));
    expect(await tip.locator('[data-field="size"]').textContent()).toBe(formatSize(size));
    expect(await tip.textContent()).toContain('allocated');
    expect(await tip.textContent()).toMatch(/age[\d,]+ requests/);
    await expect.poll(() => tip.textContent()).toContain(`frame_of_`);
    // A click pins it: moving away keeps it; Escape unpins.
    await page.mouse.click(at.x, at.y);
    await page.mouse.move(at.x, at.y - 200);
    expect(await tip.getAttribute('class')).toContain('pinned');
    await page.screenshot({ path: `${SHOTS}/segment-map-tooltip.png` });
    await page.keyboard.press('Escape');
    await expect.poll(() => tip.count()).toBe(0);

    // Keyboard: + zooms in (the ruler's domain narrows), arrows pan, 0 resets.
    const before = await domain(page);
    await canvas.focus();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    const zoomed = await domain(page);
    expect(zoomed[1]! - zoomed[0]!).toBeCloseTo((before[1]! - before[0]!) / 2.25, -3);
    await page.keyboard.press('ArrowRight');
    const panned = await domain(page);
    expect(panned[0]).toBeGreaterThan(zoomed[0]!);
    await page.keyboard.press('0');
    expect(await domain(page)).toEqual(before);
    // ] and [ pin block after block from the keyboard; Escape lets go.
    await page.keyboard.press(']');
    await page.keyboard.press(']');
    await expect.poll(() => tip.getAttribute('data-block')).toBe('1');
    expect(await tip.getAttribute('class')).toContain('pinned');
    await page.keyboard.press('[');
    await expect.poll(() => tip.getAttribute('data-block')).toBe('0');
    await page.keyboard.press('Escape');
    await expect.poll(() => tip.count()).toBe(0);
    // The wheel zooms too.
    await page.mouse.move(at.x, at.y);
    await page.mouse.wheel(0, -600);
    await expect.poll(async () => (await domain(page)).reduce((a, b) => b - a)).toBeLessThan(before[1]! - before[0]!);
    await page.waitForTimeout(100);
    await page.screenshot({ path: `${SHOTS}/segment-map-zoomed.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  test('the GPT-2 trace, dark theme, with stack frames', async () => {
    const page = await open('layout=gpt2', { dark: true });
    await expect.poll(() => page.locator('canvas.segment-map-canvas').getAttribute('data-backend')).toBe('webgpu');
    const segments = await page.evaluate(() => window.segmentMapHarness.layout!.segmentAddr.length);
    expect(segments).toBe(226);
    const b = await page.evaluate(() => {
      const l = window.segmentMapHarness.layout!;
      let best = -1;
      for (let i = 0; i < l.blockSize.length; i++) if (l.blockState[i] === 0 && l.blockSince[i]! >= 0 && (best < 0 || l.blockSize[i]! > l.blockSize[best]!)) best = i;
      return best;
    });
    const at = await page.evaluate((i) => window.segmentMapHarness.blockCenter(i), b);
    await page.mouse.move(at.x, at.y);
    await expect.poll(() => page.locator('.segment-map-tip .tip-frames li').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/segment-map-gpt2-dark.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a million blocks draw on WebGPU', async () => {
    const page = await open('layout=synthetic&blocks=1000000');
    await expect.poll(() => page.locator('canvas.segment-map-canvas').getAttribute('data-backend')).toBe('webgpu');
    const [allocated] = await colourCounts(page);
    expect(allocated).toBeGreaterThan(1000);
    await page.screenshot({ path: `${SHOTS}/segment-map-1m.png` });
    expect(errors).toEqual([]);
    await page.close();
  });

  test('where WebGPU has an adapter but its canvas cannot be shown (software compositing), the map goes to Canvas 2D and says so', async () => {
    // SwiftShader's WebGPU without its Vulkan for compositing: the adapter and device come, and the
    // browser then destroys the device of a canvas it cannot present (the map stayed blank, "WebGPU").
    const blanking = await launch(['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'], { webgpu: false });
    try {
      const page = await blanking.newPage({ viewport: { width: 1280, height: 720 } });
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await serveHarness(page);
      await page.goto(`${HARNESS_ORIGIN}/?layout=transformer`);
      await page.evaluate(() => window.segmentMapHarness.ready);
      const adapter = await page.evaluate(async () => {
        for (let i = 0; i < 5; i++) if (await navigator.gpu?.requestAdapter()) return true;
        return false;
      });
      expect(adapter, 'this Chromium gives WebGPU an adapter under these flags').toBe(true);
      const canvas = page.locator('canvas.segment-map-canvas');
      await expect.poll(() => canvas.getAttribute('data-backend'), { timeout: 15_000 }).toBe('canvas2d');
      await expect.poll(() => page.locator('.segment-map-backend').textContent()).toBe('Canvas 2D (WebGPU cannot show a canvas here)');
      await expect.poll(() => page.locator('.segment-map-failure').textContent()).toContain('destroyed the WebGPU device');
      await page.waitForTimeout(300);
      const [allocated, cached] = await colourCounts(page);
      expect(allocated).toBeGreaterThan(2000);
      expect(cached).toBeGreaterThan(50);
      await page.screenshot({ path: `${SHOTS}/segment-map-cannot-present.png` });
      expect(pageErrors).toEqual([]);
    } finally {
      await blanking.close();
    }
  });

  test('without WebGPU the Canvas 2D fallback draws the same map', async () => {
    const page = await open('layout=transformer', { noGpu: true });
    await expect.poll(() => page.locator('canvas.segment-map-canvas').getAttribute('data-backend')).toBe('canvas2d');
    const [allocated, cached] = await colourCounts(page);
    expect(allocated).toBeGreaterThan(2000);
    expect(cached).toBeGreaterThan(50);
    await page.screenshot({ path: `${SHOTS}/segment-map-canvas2d.png` });
    expect(errors).toEqual([]);
    await page.close();
  });
});
