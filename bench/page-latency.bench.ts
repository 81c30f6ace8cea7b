// Slider-to-updated-view latency on the built page in Chromium: a max_split step on the slider, then
// the replay off the main thread, the new stats and layout in the page and one painted frame.
// Goals (p95): under 50 ms on the 30k-event trace, under 300 ms on the 470k-event GPT-2 trace. GPU
// stress is paused while measuring; the map's WebGPU frame on SwiftShader is reported beside.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { preview } from 'vite';
import { launch } from '../tests/browser/chromium';
import { maxSplitSteps } from '../src/state/max-split-steps';
import { fixture, median, report, ROOT } from './harness';
import { countCpu } from './process-cpu';

const TRACES = ['transformer-s1__default.pickle.gz', 'train_gpt2-n150__default.pickle.gz'];
const SEEKS = 40;

// One slider step measured in the page: key press -> worker replay -> stats and layout -> a frame.
const STEP_IN_PAGE = `(async (key) => {
  const slider = document.querySelector('[role=slider][aria-labelledby=max-split-label]');
  performance.clearMarks('splitscope:replay-result');
  performance.clearMeasures('splitscope:map-gpu');
  const t0 = performance.now();
  slider.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
  // The new view, not what is derived from it afterwards (the tuning guide of the new config).
  await window.splitscope.viewReady();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const t1 = performance.now();
  const result = performance.getEntriesByName('splitscope:replay-result').at(-1);
  const gpu = performance.getEntriesByName('splitscope:map-gpu').reduce((sum, e) => sum + e.duration, 0);
  return [t1 - t0, result ? result.startTime - t0 : NaN, gpu];
})`;

// One seek measured in the page: seek -> the worker's view -> stats, map geometry and submit -> a frame.
const SEEK_IN_PAGE = `(async (at) => {
  performance.clearMarks('splitscope:seek-result');
  for (const m of ['splitscope:map-gpu', 'splitscope:seek-render', 'splitscope:frame']) performance.clearMeasures(m);
  const t0 = performance.now();
  window.splitscope.seek(at);
  await window.splitscope.viewReady();
  await new Promise((r) => requestAnimationFrame(() => r()));
  const t1 = performance.now();
  const result = performance.getEntriesByName('splitscope:seek-result').at(-1);
  const sum = (name) => performance.getEntriesByName(name).reduce((s, e) => s + e.duration, 0);
  return [t1 - t0, result ? result.startTime - t0 : NaN, sum('splitscope:map-gpu'), sum('splitscope:seek-render') + sum('splitscope:frame')];
})`;

/** Sweep runs per worker count, alternated, after WARM_UP_RUNS of each to warm the pool up. */
const SWEEP_RUNS = 9;
/**
 * Warm-up runs per worker count. After two, the next 9 pairs' speedup was 1.60-1.69 in three of three
 * runs with Chromium's flags, the 9 after them 1.76-1.78: V8 still compiles the workers' replay on
 * background threads, and the replay worker makes its checkpoints, each taking one of the two cores.
 * After six (or two and a 3 s pause), 1.75-1.76 at once.
 */
const WARM_UP_RUNS = 6;

/**
 * 32 max_split settings (20 MiB up by 25% steps, then unlimited) on the open trace, 1 worker and all,
 * on the warm pool, alternated SWEEP_RUNS times (medians and ranges). Goal: 2 workers at least 1.7x
 * faster than one. Judged where the slider is (see MODES): with the tests' flags in a window, each
 * frame the page draws while a sweep runs (the panel saying it is working, the first rows) costs
 * SwiftShader's compositing on the CPU, taken from one of the two workers; a single worker leaves
 * that core free. A real display's GPU takes no core; those figures are printed too.
 */
async function benchSweep(page: import('playwright-core').Page, mode: string, judged: boolean): Promise<void> {
  const values = [...Array.from({ length: 31 }, (_, i) => Math.round(20 * 1.25 ** i)), null];
  const cores = await page.evaluate<number>('navigator.hardwareConcurrency');
  const time = (workers: number): Promise<number> => page.evaluate<number>(`window.splitscope.timeSweep(${JSON.stringify(values)}, ${workers})`);
  // A warm pool: every worker started, compiled and holding the trace's stream, as after a source's first sweep.
  for (let r = 0; r < WARM_UP_RUNS; r++) {
    await time(cores);
    await time(1);
  }
  const one: number[] = [];
  const all: number[] = [];
  for (let r = 0; r < SWEEP_RUNS; r++) {
    one.push(await time(1));
    all.push(await time(cores));
  }
  const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)}`;
  const speedup = median(one) / median(all);
  const verdict = cores < 2 ? 'not measured (one core)' : speedup >= 1.7 ? 'met' : 'NOT met';
  report(`sweep of 32 max_split settings: ${TRACES[0]}, Chromium, ${mode}, warm pool, medians of ${SWEEP_RUNS}`, {
    '1 worker (s)': `${median(one).toFixed(3)} (${spread(one)})`,
    [`${cores} workers, one per core (s)`]: `${median(all).toFixed(3)} (${spread(all)})`,
    speedup: speedup.toFixed(2),
    'warm-up runs of each before, not counted': WARM_UP_RUNS,
    [judged ? 'goal: 2 workers at least 1.7x faster than 1' : '(goal judged in the last two modes, below)']: judged ? verdict : `${verdict} here`,
  });
}

/**
 * Chromium rasterizes the page (the panels, the timeline's axes) with the GPU. Here that GPU is
 * SwiftShader, which emulates GL on the 2 CPU cores; with GPU raster off, Skia rasterizes on the CPU.
 * A headed window on Xvfb presents every frame through SwiftShader. (Until the timeline's series
 * moved to a canvas, Chromium drew its layer with 8x MSAA, 6+ concave paths, which SwiftShader did in
 * ~100 ms a frame: the step's p95 was ~230 ms here; see views/paint-paths.ts.) With the headless ozone
 * platform Chromium runs the same page, compositor and frames with no X window to present to. All
 * three are reported; the segment map's WebGPU runs on SwiftShader in each.
 *
 * Chromium here without the tests' flags (the fourth mode) has no WebGPU adapter, so the map draws
 * on Canvas 2D, and composites in software (chrome://gpu: "Compositing: Software only"): what a
 * user of this machine's Chromium gets, in a window. The flags (tests/browser/chromium.ts) route
 * compositing through SwiftShader's Vulkan, since a WebGPU canvas does not show under software
 * compositing; in a window, each frame's damaged area is then composited by SwiftShader and read
 * back for the X server, ~20 ms per million pixels on these cores, where a GPU takes about a
 * millisecond. Measured (CPU per step, printed below, on the 30k trace): the renderer does the same
 * work in every mode (~15 ms a step), the GPU process 5 ms without a window and 18-28 ms with one
 * (most positions replay alike and draw nothing new; a step that changes the map and the timeline
 * costs it ~40). So the slider's and the sweep's goals are judged in the two modes a user's machine
 * is near: WebGPU with no window to present to, and Chromium's own flags in a window.
 */
interface Mode {
  name: string;
  args: string[];
  webgpu: boolean;
  judged: boolean;
}
const MODES: Mode[] = [
  { name: 'Xvfb window, GPU raster on SwiftShader', args: [], webgpu: true, judged: false },
  { name: 'Xvfb window, CPU raster (--disable-gpu-rasterization)', args: ['--disable-gpu-rasterization'], webgpu: true, judged: false },
  { name: 'no window to present to (--ozone-platform=headless)', args: ['--ozone-platform=headless'], webgpu: true, judged: true },
  { name: "Xvfb window, Chromium's own flags (no WebGPU: the map on Canvas 2D; software compositing)", args: [], webgpu: false, judged: true },
];

export async function benchPageLatency(): Promise<void> {
  if (!existsSync(`${ROOT}/dist/index.html`)) spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  const server = await preview({ preview: { host: '127.0.0.1', port: 0, strictPort: false }, logLevel: 'warn' });
  try {
    for (const mode of MODES) await benchMode(server.resolvedUrls!.local[0]!, mode);
  } finally {
    await server.close();
  }
}

const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)]!;
const range = (xs: number[]): string => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;

/** Runs `count` measured steps in the page, each returning [total, until the worker answered, map GPU, page work] ms. */
async function measure(page: import('playwright-core').Page, count: number, step: (i: number) => string): Promise<{ total: number[]; worker: number[]; gpu: number[]; work: number[] }> {
  const out = { total: [] as number[], worker: [] as number[], gpu: [] as number[], work: [] as number[] };
  for (let i = 0; i < count; i++) {
    const [total, worker, gpu, work] = await page.evaluate<[number, number, number, number?]>(step(i));
    out.total.push(total);
    out.worker.push(worker);
    out.gpu.push(gpu);
    out.work.push(work ?? NaN);
  }
  return out;
}

async function benchMode(url: string, { name: mode, args, webgpu, judged }: Mode): Promise<void> {
  const browser = await launch(args, { webgpu });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await page.waitForFunction(`'splitscope' in window`);
    // The GPU stress run would share SwiftShader's CPU threads with the page here: pause it, so the
    // figure is the view's own (on a real GPU the stress kernels do not take the CPU).
    if (webgpu) await page.getByRole('region', { name: 'GPU stress' }).getByRole('button', { name: 'Pause' }).click({ timeout: 60_000 });
    for (const file of TRACES) {
      await page.setInputFiles('input[type=file]', fixture(file));
      await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(file)})`, undefined, { timeout: 120_000 });
      await page.evaluate('window.splitscope.ready()');
      await page.evaluate('window.splitscope.guide()'); // the sweep and the guide a new source starts, out of the way
      const { total } = await page.evaluate<{ total: number }>('window.splitscope.cursor()');
      // A drag over the slider's whole range and back, one position a step (each a new config to
      // replay): from 20 MiB up to unlimited, then down again.
      const slider = page.getByRole('slider', { name: /max_split/ });
      await slider.focus();
      await slider.press('Home');
      await page.evaluate('window.splitscope.ready()');
      const positions = maxSplitSteps(Number(await slider.getAttribute('aria-valuemax'))).length;
      const keys = [...Array<string>(positions - 1).fill('ArrowRight'), ...Array<string>(positions - 1).fill('ArrowLeft')];
      const cpu = await countCpu(browser);
      const steps = await measure(page, keys.length, (i) => `${STEP_IN_PAGE}(${JSON.stringify(keys[i])})`);
      const perStep = cpu.stop();
      if (file === TRACES[0]) await benchSweep(page, mode, judged);
      const goal = file === TRACES[0] ? 50 : 300;
      const verdict = p95(steps.total) < goal ? 'met' : 'NOT met';
      report(`slider to updated view: ${file} (${total.toLocaleString()} requests), Chromium, ${mode}`, {
        'median ms (range)': range(steps.total),
        'p95 ms': p95(steps.total).toFixed(0),
        'of which until the worker answered, median ms': median(steps.worker).toFixed(0),
        ...(webgpu && {
          "of which the map's WebGPU frame on SwiftShader, median ms": median(steps.gpu).toFixed(0),
          'p95 less that frame, ms': p95(steps.total.map((t, i) => t - steps.gpu[i]!)).toFixed(0),
        }),
        'CPU per step, renderer (page and workers) / GPU process, ms': `${(perStep.renderer / keys.length).toFixed(1)} / ${(perStep.gpu / keys.length).toFixed(1)}`,
        steps: `${keys.length} (${positions} positions, up and down)`,
        [judged ? `goal: p95 under ${goal} ms` : '(goal judged in the last two modes, below)']: judged ? verdict : `${verdict} here`,
      });
      // Seeks anywhere, backwards too (a fixed pseudo-random walk).
      let seed = 12345;
      const seeks = await measure(page, SEEKS, () => `${SEEK_IN_PAGE}(${(seed = (seed * 1103515245 + 12345) >>> 0) % total})`);
      const pagePart = seeks.work;
      report(`seek to a random event: ${file}, Chromium, ${mode}`, {
        'seek to the next frame drawn, median ms (range)': range(seeks.total),
        "the worker's answer (page clock, with the message), median and p95 ms": `${median(seeks.worker).toFixed(1)}, ${p95(seeks.worker).toFixed(1)}`,
        "the page's part (render: stats, cursor; the frame: timeline, map geometry and submit), median and p95 ms": `${median(pagePart).toFixed(1)}, ${p95(pagePart).toFixed(1)}`,
        ...(webgpu && { "the map's WebGPU frame on SwiftShader, median ms": median(seeks.gpu).toFixed(1) }),
        seeks: SEEKS,
        // The worker's own part (under 5 ms) is 'seek, worker's part' in Node above; here it includes the messages.
        "goal: the page's part under 11 ms (p95)": p95(pagePart) < 11 ? 'met' : 'NOT met',
      });
    }
  } finally {
    await browser.close();
  }
}
