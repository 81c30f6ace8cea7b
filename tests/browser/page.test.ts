// The page in real Chromium: it opens on a built-in workload already moving; the GPT-2 sample opens
// with one click and replays like the CLI; the max_split slider and the config field replay it like
// `splitscope replay --conf`; a bad file gives a clear message while the previous view stays.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'fflate';
import { expect, test } from 'vitest';
import { ImportError } from '../../src/lib/import-error';
import { decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { openPage, SHOTS as shots } from './open-page';
import { allocatedColour, pixelsOfColour } from './series-pixels';

const session = openPage();
const SAMPLE = 'public/samples/train_gpt2-n12.pickle.gz';

type Stats = Record<string, number>;
// Page-side code as strings: vitest rewrites test-file functions with helpers the page lacks.
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const stats = () => session.page.evaluate<Stats>('window.splitscope.stats()');
const cursor = () => session.page.evaluate<{ index: number; total: number }>('window.splitscope.cursor()');

function cli(args: string[]): { stats: Stats } {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

test('opens on a built-in workload whose cursor is already moving', async () => {
  // Its first view is at the last request until playing's first seek, back to the start, is drawn:
  // wait until the cursor is inside the run. (Read at the end, as it was in two full runs, it could
  // never move past it.)
  await session.page.waitForFunction(`window.splitscope.cursor().index > 0 && window.splitscope.cursor().index < window.splitscope.cursor().total - 1`, undefined, { timeout: 60_000 });
  const first = await cursor();
  await session.page.waitForFunction(`window.splitscope.cursor().index > ${first.index}`, undefined, { timeout: 30_000 });
  expect((await cursor()).total).toBeGreaterThan(5000);
  await session.page.screenshot({ path: `${shots}/opening.png` });
});

/** Fails, saying so, where the segment map does not draw on WebGPU (no GPU adapter). */
async function mapOnWebGpu(): Promise<void> {
  await expect
    .poll(() => session.page.locator('canvas.segment-map-canvas').getAttribute('data-backend'), { timeout: 15_000, message: 'the segment map draws on WebGPU (this test needs a GPU adapter)' })
    .toBe('webgpu');
}

test("while the workload plays, the map's GPU frames keep up with the cursor rather than queue", async () => {
  // One frame in flight at a time: where the GPU takes longer than an animation frame (SwiftShader
  // here), a frame per seek queued without bound: each frame finished 1.4 s after it was sent after
  // 3 s of playing, and the backlog took a core from the next file's open.
  // Without a GPU adapter there is neither a WebGPU map nor a stress run: say so, not a click's timeout.
  await mapOnWebGpu();
  // The GPU stress run paused, as a user may: running, it kept the page from asking for many frames.
  await session.page.getByRole('region', { name: 'GPU stress' }).getByRole('button', { name: 'Pause' }).click({ timeout: 60_000 });
  await session.page.locator('.tl-play[aria-label=Pause]').waitFor({ timeout: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const lags = await session.page.evaluate<number[]>(`performance.getEntriesByName('splitscope:map-gpu').slice(-10).map((e) => e.duration)`);
  expect(lags.length).toBeGreaterThan(5);
  expect(Math.max(...lags)).toBeLessThan(700);
});

test('the GPT-2 sample opens with one click and replays like the CLI', async () => {
  // The workload stops playing when the open starts, not when the sample is shown: its seeks and
  // frames took both cores from the open (random-s3 took up to twice as long to its first view).
  await session.page.locator('.tl-play[aria-label=Pause]').waitFor({ timeout: 30_000 });
  await session.page.evaluate(`(() => {
    window.__whileOpening = [];
    window.__playWatch = new MutationObserver(() => {
      if (document.querySelector('progress.import')) window.__whileOpening.push(document.querySelector('.tl-play')?.getAttribute('aria-label'));
    });
    window.__playWatch.observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
  })()`);
  await session.page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready();
  // The workload was playing: no seek of it reached the worker once the worker held the sample
  // (between the open and the sample's first replay the page would have drawn the sample's state
  // under the workload's figures).
  const seeksWhileOpening = await session.page.evaluate<number>(`(() => {
    const opened = performance.getEntriesByName('splitscope:opened').at(-1).startTime;
    const replayed = performance.getEntriesByName('splitscope:replay-result').find((e) => e.startTime >= opened).startTime;
    return performance.getEntriesByName('splitscope:seek-result').filter((e) => e.startTime > opened && e.startTime < replayed).length;
  })()`);
  expect(seeksWhileOpening).toBe(0);
  const whileOpening = await session.page.evaluate<string[]>('(window.__playWatch.disconnect(), window.__whileOpening)');
  expect(whileOpening.length).toBeGreaterThan(0);
  expect(new Set(whileOpening)).toEqual(new Set(['Play']));
  const want = cli(['replay', SAMPLE]).stats;
  expect(await stats()).toEqual(want);
  const c = await cursor();
  expect(c.index).toBe(c.total - 1);
  await session.page.screenshot({ path: `${shots}/sample.png` });
});

test('the page is cross-origin isolated: its workers share one copy of a request stream', async () => {
  // Without COOP and COEP from the server there is no SharedArrayBuffer, and each sweep worker and the
  // page hold their own copy (on a 1 GB snapshot, ~200 MB each).
  expect(await session.page.evaluate<boolean>('crossOriginIsolated && typeof SharedArrayBuffer === "function"')).toBe(true);
});

test('the sweep under the slider gives the same numbers as splitscope sweep', async () => {
  const { values, rows } = await session.page.evaluate<{ values: (number | null)[]; rows: unknown[] }>('window.splitscope.sweep()');
  expect(values.length).toBeGreaterThan(20);
  const list = values.map((v) => (v === null ? 'none' : String(v))).join(',');
  const want = JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'sweep', SAMPLE, '--max-split', list, '--json'], { encoding: 'utf8' }));
  expect(rows).toEqual(want);
  // The sample began mid-run: "no OOM" reaches the recorded requests only.
  await expect.poll(() => session.page.locator('.advice').textContent()).toMatch(/Suggestion: .* does best: no OOM in the recorded requests \(0 to [\d,]+; the recording began mid-run\)/);
});

test('the max_split slider, moved from unlimited to 128 MiB, replays like splitscope replay --conf max_split_size_mb:128', async () => {
  const slider = session.page.getByRole('slider', { name: /max_split/ });
  await slider.focus();
  await slider.press('End');
  expect(await slider.getAttribute('aria-valuetext')).toBe('unlimited');
  for (let i = 0; i < 60 && (await slider.getAttribute('aria-valuenow')) !== '128'; i++) await slider.press('ArrowLeft');
  expect(await slider.getAttribute('aria-valuenow')).toBe('128');
  await ready();
  const want = cli(['replay', SAMPLE, '--conf', 'max_split_size_mb:128']).stats;
  expect(await stats()).toEqual(want);
  await session.page.screenshot({ path: `${shots}/max-split-128.png` });
});

test('a config change keeps the cursor: the state there under the new config, as splitscope replay --until gives it', async () => {
  const { total } = await cursor();
  const at = Math.floor(total * 0.4);
  await session.page.evaluate(`window.splitscope.seek(${at})`);
  await session.page.waitForFunction(`window.splitscope.cursor().index === ${at}`);
  await ready();
  const slider = session.page.getByRole('slider', { name: /max_split/ });
  await slider.focus();
  await slider.press('ArrowLeft');
  const mb = await slider.getAttribute('aria-valuenow');
  await ready();
  expect((await cursor()).index).toBe(at);
  const conf = await session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF').inputValue();
  expect(conf).toContain(`max_split_size_mb:${mb}`);
  expect(await stats()).toEqual(cli(['replay', SAMPLE, '--conf', conf, '--until', String(at)]).stats);
  // The end is a key away, and is the whole replay's.
  await session.page.locator('h1').click();
  await session.page.keyboard.press('End');
  await session.page.waitForFunction(`window.splitscope.cursor().index === ${total - 1}`);
  await ready();
  expect(await stats()).toEqual(cli(['replay', SAMPLE, '--conf', conf]).stats);
});

test('a slider step that replays to the same picture redraws neither the map nor the timeline; a step that changes it redraws both', async () => {
  // The map's frames are counted on WebGPU: without an adapter, say so rather than count none.
  await mapOnWebGpu();
  // Counts, from the page, the map's WebGPU frames, writes to the two views' SVG, and the timeline canvas's paints and pixels.
  const watch = () =>
    session.page.evaluate(`(() => {
      window.__writes = 0;
      window.__viewsWatch?.disconnect();
      window.__viewsWatch = new MutationObserver((ms) => (window.__writes += ms.length));
      for (const svg of document.querySelectorAll('.segment-map-plot svg, .tl-plot svg')) window.__viewsWatch.observe(svg, { subtree: true, childList: true, attributes: true, characterData: true });
      window.__frames = performance.getEntriesByName('splitscope:map-gpu').length;
      // The timeline canvas's paints: each begins with a clearRect.
      window.__paints = 0;
      if (!window.__countsPaints) {
        window.__countsPaints = true;
        const clear = CanvasRenderingContext2D.prototype.clearRect;
        CanvasRenderingContext2D.prototype.clearRect = function (...args) {
          if (this.canvas.classList.contains('tl-series')) window.__paints++;
          return clear.apply(this, args);
        };
      }
    })()`);
  const seen = () =>
    session.page.evaluate<{ writes: number; frames: number; paints: number; series: number }>(`(() => {
      const c = document.querySelector('canvas.tl-series');
      const d = c.getContext('2d', { willReadFrequently: true }).getImageData(0, 0, c.width, c.height).data;
      let sum = 0;
      for (let i = 0; i < d.length; i += 4) sum = (sum * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2] + d[i + 3]) % 1000000007;
      return { writes: window.__writes, frames: performance.getEntriesByName('splitscope:map-gpu').length - window.__frames, paints: window.__paints, series: sum };
    })()`);
  // Its stats but the setting itself: equal, the two replays made the same calls.
  const replayed = async () => {
    const { max_split_size: _, ...rest } = await stats();
    return rest;
  };
  const slider = session.page.getByRole('slider', { name: /max_split/ });
  await slider.focus();
  await slider.press('End');
  await slider.press('ArrowLeft');
  await ready();
  const before = await seen();
  const top = await replayed();
  await watch();
  // The two largest finite settings: no block of this run comes near either.
  await slider.press('ArrowLeft');
  await ready();
  expect(await replayed()).toEqual(top);
  expect(await seen()).toEqual({ writes: 0, frames: 0, paints: 0, series: before.series });
  await watch();
  await slider.press('Home');
  await ready();
  expect(await replayed()).not.toEqual(top);
  const after = await seen();
  expect(after.frames).toBeGreaterThan(0);
  expect(after.writes).toBeGreaterThan(0);
  expect(after.paints).toBeGreaterThan(0);
  expect(after.series).not.toBe(before.series);
});

test('a typed config is checked as it is typed and replays like splitscope replay --conf', async () => {
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:10');
  await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
  await field.fill('max_split_size_mb:256,roundup_power2_divisions:4');
  expect(await field.getAttribute('aria-invalid')).toBe('false');
  await field.press('Enter');
  await ready();
  const want = cli(['replay', SAMPLE, '--conf', 'max_split_size_mb:256,roundup_power2_divisions:4']).stats;
  expect(await stats()).toEqual(want);
});

test('exports: the run as a snapshot the CLI replays to the same stats, the sweep as CSV, the timeline as SVG', async () => {
  const page = session.page;
  const atEnd = await stats();
  await page.getByText('Export…').click();
  const save = async (button: string): Promise<string> => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
    const path = `test-results/${download.suggestedFilename()}`;
    await download.saveAs(path);
    return path;
  };
  const pickle = await save('Snapshot (.pickle, memory_viz)');
  // Replayed under the settings it records, the exported run gives back its own stats.
  expect(cli(['replay', pickle]).stats).toEqual(atEnd);
  // The JSON, gzip-compressed (JSON writes every entry's stack out in full): the same run, about the pickle's size.
  const json = await save('Snapshot (.json.gz)');
  expect(cli(['replay', json]).stats).toEqual(atEnd);
  expect(JSON.parse(new TextDecoder().decode(gunzipSync(readFileSync(json)))).device_traces).toBeInstanceOf(Array);
  expect(statSync(json).size).toBeLessThan(2 * statSync(pickle).size);
  const csv = readFileSync(await save('Sweep (.csv)'), 'utf8').trim().split('\n');
  expect(csv[0]).toMatch(/^max_split_size_mb,conf,reserved_bytes.all.peak/);
  expect(csv.length).toBeGreaterThan(20);
  const timeline = readFileSync(await save('Timeline (.svg)'), 'utf8');
  expect(timeline).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  // The series, which the page paints on a canvas, are in the file as visible paths.
  for (const series of ['tl-reserved', 'tl-allocated']) expect(timeline).toMatch(new RegExp(`<path class="${series}" d="M[^"]+" style="[^"]*visibility:visible`));
  expect(timeline).not.toMatch(/data-canvas/);
  // It stands alone: a caption (the file, the config, the cap, the cursor) and the legend of its colours.
  const sampleName = await page.locator('.source-line strong').textContent();
  expect(timeline).toContain(`Timeline: ${sampleName}`);
  expect(timeline).toMatch(/>(replayed under )?PYTORCH_CUDA_ALLOC_CONF /);
  expect(timeline).toMatch(/(capped at [\d.]+ [KMG]iB|no cap)/);
  expect(timeline).toMatch(/at request [\d,]+ of 0 to [\d,]+/);
  for (const key of ['>allocated ', '>reserved ', '>OOM']) expect(timeline).toContain(key);
  expect(readFileSync(await save('Timeline (.png)')).subarray(1, 4).toString()).toBe('PNG');
  // The segment map at its zoom: one rect per block drawn (and per segment band), under its ruler and lane labels.
  const mapSvg = readFileSync(await save('Segment map (.svg)'), 'utf8');
  expect(mapSvg).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  expect((mapSvg.match(/<rect /g) ?? []).length).toBeGreaterThan(100);
  expect(mapSvg).toMatch(/large pool · stream 0 · \d+ segments/);
  expect(mapSvg).toContain(`Segment map: ${sampleName}`);
  expect(mapSvg).toContain('>oversize (≥ max_split)<');
  // The ruler's first label reads whole from the left edge (it was cut: "ytes").
  expect(mapSvg).toMatch(/<g class="tick"[^>]*><line[^>]*\/><text[^>]*text-anchor:start/);
  expect(readFileSync(await save('Segment map (.png)')).subarray(1, 4).toString()).toBe('PNG');
});

test('arrow keys step the cursor one request when no control has focus, and the stats follow', async () => {
  await session.page.locator('h1').click();
  const before = await cursor();
  const atEnd = await stats();
  await session.page.keyboard.press('ArrowLeft');
  await session.page.waitForFunction(`window.splitscope.cursor().index === ${before.index - 1}`);
  await ready();
  const back = await stats();
  await session.page.keyboard.press('ArrowRight');
  await session.page.waitForFunction(`window.splitscope.cursor().index === ${before.index}`);
  await ready();
  expect(await stats()).not.toEqual(back);
  await session.page.keyboard.press('Home');
  await session.page.waitForFunction(`window.splitscope.cursor().index === 0`);
  await ready();
  // Request 1 of a trace that begins mid-run: only what existed before it, plus at most one segment.
  expect((await stats())['num_device_alloc']).toBeLessThan(atEnd['num_device_alloc']!);
  await session.page.keyboard.press('End');
  await session.page.waitForFunction(`window.splitscope.cursor().index === ${before.total - 1}`);
  await ready();
});

test('opening a file moves nothing on the page (a resize would redraw the map and timeline mid-open)', async () => {
  // Watches, from the page, where the views start while the file is read and until it is drawn.
  await session.page.evaluate(`(() => {
    const layout = document.querySelector('.layout');
    const top = layout.getBoundingClientRect().top;
    window.__open = { bar: false, moved: [] };
    window.__openWatch = new MutationObserver(() => {
      if (document.querySelector('progress.import')) window.__open.bar = true;
      const now = layout.getBoundingClientRect().top;
      if (now !== top) window.__open.moved.push(now - top);
    });
    window.__openWatch.observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
  })()`);
  await session.page.setInputFiles('input[type=file]', SAMPLE);
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('train_gpt2-n12.pickle.gz')`);
  await ready();
  const open = await session.page.evaluate<{ bar: boolean; moved: number[] }>(`(window.__openWatch.disconnect(), window.__open)`);
  expect(open.bar).toBe(true); // the progress bar was shown
  expect(open.moved).toEqual([]);
  expect(await session.page.locator('progress.import').count()).toBe(0);
});

test('a file of random bytes gives an alert and the previous view stays', async () => {
  const before = await stats();
  const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
  await session.page.setInputFiles('input[type=file]', { name: 'random.pickle', mimeType: 'application/octet-stream', buffer: bytes });
  const alert = session.page.locator('.banner[role=alert]');
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/not a PyTorch memory snapshot|pickle/i);
  await ready();
  expect(await stats()).toEqual(before);
  await session.page.screenshot({ path: `${shots}/bad-file.png` });
});

test('a large file cut off, gzip-compressed or not, is read as a stream and says what the whole-file read says; the previous view stays', async () => {
  const gz = readFileSync('tests/fixtures/train_gpt2-n150__default.pickle.gz');
  const raw = gunzipSync(gz);
  const cut: [string, Uint8Array][] = [
    ['cut.pickle.gz', gz.subarray(0, gz.length >> 1)],
    ['cut.pickle', raw.subarray(0, raw.length - 1000)],
  ];
  for (const [name, bytes] of cut) {
    let want = '';
    try {
      decodeSnapshotForReplay(bytes);
    } catch (e) {
      want = e instanceof ImportError ? e.message : '';
    }
    expect(want).toMatch(/truncated/);
    const before = await stats();
    await session.page.setInputFiles('input[type=file]', { name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
    await session.page.waitForFunction(`document.querySelector('.banner[role=alert]')?.textContent.includes(${JSON.stringify(name)})`, undefined, { timeout: 60_000 });
    expect(await session.page.locator('.banner[role=alert]').textContent()).toContain(want);
    await ready();
    expect(await stats()).toEqual(before);
  }
});

test('the theme button switches to dark and light', async () => {
  const theme = session.page.getByRole('button', { name: /^Theme/ });
  const light = await allocatedColour(session.page);
  await theme.click();
  expect(await session.page.evaluate(`document.documentElement.dataset.theme`)).toBe('dark');
  // The timeline's canvas is painted again in the dark colours.
  const dark = await allocatedColour(session.page);
  expect(dark).not.toBe(light);
  await expect.poll(() => pixelsOfColour(session.page, dark)).toBeGreaterThan(100);
  await session.page.screenshot({ path: `${shots}/dark.png` });
  await theme.click();
  expect(await session.page.evaluate(`document.documentElement.dataset.theme`)).toBe('light');
  await expect.poll(() => pixelsOfColour(session.page, light)).toBeGreaterThan(100);
  await session.page.screenshot({ path: `${shots}/light.png` });
});

test('no uncaught errors on the page', () => {
  expect(session.errors).toEqual([]);
});
