// Slider-to-updated-view latency on the built page in Chromium: a max_split step on the slider, then
// the replay off the main thread, the new stats and layout in the page and one painted frame.
// Goals: under 100 ms on a 30k-event trace, under 1 s on the 470k-event GPT-2 trace. GPU stress is
// paused while measuring.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { preview } from 'vite';
import { launch } from '../tests/browser/chromium';
import { fixture, median, report, ROOT } from './harness';

const TRACES = ['transformer-s1__default.pickle.gz', 'train_gpt2-n150__default.pickle.gz'];
const STEPS = 15;

// One slider step measured in the page: key press -> worker replay -> stats and layout -> a frame.
const STEP_IN_PAGE = `(async (key) => {
  const slider = document.querySelector('[role=slider][aria-labelledby=max-split-label]');
  performance.clearMarks('splitscope:replay-result');
  const t0 = performance.now();
  slider.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
  await window.splitscope.ready();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const t1 = performance.now();
  const result = performance.getEntriesByName('splitscope:replay-result').at(-1);
  return [t1 - t0, result ? result.startTime - t0 : NaN];
})`;

/** 32 max_split settings (20 MiB up by 25% steps, then unlimited) on the open trace, 1 worker and all. */
async function benchSweep(page: import('playwright-core').Page): Promise<void> {
  const values = [...Array.from({ length: 31 }, (_, i) => Math.round(20 * 1.25 ** i)), null];
  const cores = await page.evaluate<number>('navigator.hardwareConcurrency');
  const one = await page.evaluate<number>(`window.splitscope.timeSweep(${JSON.stringify(values)}, 1)`);
  const all = await page.evaluate<number>(`window.splitscope.timeSweep(${JSON.stringify(values)}, ${cores})`);
  report(`sweep of 32 max_split settings: ${TRACES[0]}, Chromium`, {
    '1 worker (s)': one.toFixed(2),
    [`${cores} workers, one per core (s)`]: all.toFixed(2),
    speedup: (one / all).toFixed(2),
  });
}

/**
 * Chromium rasterizes the page (the timeline's SVG, the panels) with the GPU. Here that GPU is
 * SwiftShader, which emulates GL on the 2 CPU cores and makes raster the largest part of a step; with
 * GPU raster off, Skia rasterizes on the CPU, nearer what a real GPU costs. Both are reported; the
 * segment map's WebGPU runs on SwiftShader in both.
 */
const RASTER_MODES: [string, string[]][] = [
  ['GPU raster on SwiftShader', []],
  ['CPU raster (--disable-gpu-rasterization)', ['--disable-gpu-rasterization']],
];

export async function benchPageLatency(): Promise<void> {
  if (!existsSync(`${ROOT}/dist/index.html`)) spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  const server = await preview({ preview: { host: '127.0.0.1', port: 0, strictPort: false }, logLevel: 'warn' });
  try {
    for (const [mode, args] of RASTER_MODES) await benchMode(server.resolvedUrls!.local[0]!, mode, args, mode === RASTER_MODES[0]![0]);
  } finally {
    await server.close();
  }
}

async function benchMode(url: string, mode: string, args: string[], withSweep: boolean): Promise<void> {
  const browser = await launch(args);
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await page.waitForFunction(`'splitscope' in window`);
    // The GPU stress run would share SwiftShader's CPU threads with the page here: pause it, so the
    // figure is the view's own (on a real GPU the stress kernels do not take the CPU).
    const pause = page.getByRole('region', { name: 'GPU stress' }).getByRole('button', { name: 'Pause' });
    await pause.click({ timeout: 60_000 });
    for (const file of TRACES) {
      await page.setInputFiles('input[type=file]', fixture(file));
      await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(file)})`, undefined, { timeout: 120_000 });
      await page.evaluate('window.splitscope.ready()');
      await page.evaluate('window.splitscope.guide()'); // the sweep and the guide a new source starts, out of the way
      const { total } = await page.evaluate<{ total: number }>('window.splitscope.cursor()');
      // Start at 256 MiB and step down and up around it, each step a new config to replay.
      const slider = page.getByRole('slider', { name: /max_split/ });
      await slider.focus();
      await slider.press('End');
      await page.evaluate('window.splitscope.ready()');
      const times: number[] = [];
      const worker: number[] = [];
      for (let i = 0; i < STEPS; i++) {
        const [total, toResult] = await page.evaluate<[number, number]>(`${STEP_IN_PAGE}(${JSON.stringify(i % 4 < 2 ? 'ArrowLeft' : 'ArrowRight')})`);
        times.push(total);
        worker.push(toResult);
      }
      if (file === TRACES[0] && withSweep) await benchSweep(page);
      const sorted = [...times].sort((a, b) => a - b);
      report(`slider to updated view: ${file} (${total.toLocaleString()} requests), Chromium, ${mode}`, {
        'median ms': median(times).toFixed(0),
        'p95 ms': sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!.toFixed(0),
        'of which until the worker answered, median ms': median(worker).toFixed(0),
        steps: STEPS,
        [`goal: under ${file === TRACES[0] ? '100 ms' : '1 s'}`]: median(times) < (file === TRACES[0] ? 100 : 1000) ? 'met' : 'NOT met',
      });
    }
  } finally {
    await browser.close();
  }
}
