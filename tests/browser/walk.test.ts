// A seeded walk of what a user does (open one of several real snapshots, the max_split slider, the
// config field, the cap, compare, insert a call, seek, open the share link in a fresh page, switch
// device, "as recorded"). After each step settles, every panel that shows figures names the view key
// they were computed for, and it is the current one; the stats at the cursor and at the end, the OOM
// box, the tuning guide's current figures and the comparison equal `splitscope replay --json` for that
// key (and --until the cursor); a file opened from the menu opens as recorded; and on a recording that
// ends at its OOM no verdict reaches past its last request.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { decodeLink } from '../../src/state/link-codec';
import { launch } from './chromium';

const FILES = [
  // An out-of-memory observer's dump: the recording ends at its OOM.
  { path: 'tests/fixtures/real/vit_oom__default.pickle.gz', endsAtOom: true },
  // Recorded under large_segment_size_mb:40: the slider's floor is 40 MiB.
  { path: 'tests/fixtures/real/lss40__large_segment_size_mb=40.pickle.gz', endsAtOom: false },
  // A side-stream prefetch (record_stream): pending frees, two streams.
  { path: 'tests/fixtures/real/prefetch__default.pickle.gz', endsAtOom: false },
  // A CUDA graph and a MemPool (private pools), empty_cache() between phases.
  { path: 'tests/fixtures/real/graphs.pickle.gz', endsAtOom: false },
  // Two GPUs (475 KB: too large for a link, which then asks for the file).
  { path: 'tests/fixtures/random-s1+transformer-s1__default__two_devices.pickle.gz', endsAtOom: false },
];
const CONFS = ['max_split_size_mb:128', 'expandable_segments:True', 'roundup_power2_divisions:4', 'garbage_collection_threshold:0.6,max_split_size_mb:256', ''];
const CAPS = ['none', String(24 * 2 ** 30), String(150_109_880_320)];
const STEPS = 34;
const SEED = 33;

type Stats = Record<string, number>;
type Replay = { stats: Stats; ooms: { request: number }[] };

let browser: Browser;
let page: Page;
const errors: string[] = [];
/** The file on screen (what the CLI replays). */
let file = FILES[0]!;

async function newPage(url: string): Promise<void> {
  const old = page;
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(`'splitscope' in window`);
  await old?.close();
}

beforeAll(async () => {
  browser = await launch();
  await newPage(inject('baseUrl'));
});

afterAll(async () => {
  await browser?.close();
});

/** mulberry32: the walk is the same on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const replays = new Map<string, Replay>();
function cli(args: string[]): Replay {
  const id = [file.path, ...args].join(' ');
  let r = replays.get(id);
  if (!r) {
    r = JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', file.path, ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Replay;
    replays.set(id, r);
  }
  return r;
}

const ready = () => page.evaluate<void>('window.splitscope.ready()');

async function openFile(f: (typeof FILES)[number]): Promise<void> {
  file = f;
  const name = f.path.split('/').pop()!;
  await page.setInputFiles('header input[type=file]', { name, mimeType: 'application/gzip', buffer: readFileSync(f.path) });
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(name)}`, undefined, { timeout: 60_000 });
}

/** The view key as the page writes it: [source, conf, capacity, device, emptyCacheAfter, resetPeakAfter, size]. */
type Key = [number, string | null, number | null, number, number[], number[], number | null];

/** splitscope replay's arguments for the settings of `key`. */
function argsOf([, conf, cap, device, emptyCache, resetPeak]: Key): string[] {
  return [
    ...(conf !== null ? ['--conf', conf] : []),
    ...(cap !== null ? ['--capacity', String(cap)] : []),
    ...(device ? ['--device', String(device)] : []),
    ...(emptyCache.length ? ['--empty-cache-at', emptyCache.join(',')] : []),
    ...(resetPeak.length ? ['--reset-peak-at', resetPeak.join(',')] : []),
  ];
}

async function check(step: string, openedAsRecorded: boolean): Promise<void> {
  await ready();
  const keyText = await page.evaluate<string>('window.splitscope.key()');
  const key = JSON.parse(keyText) as Key;
  if (openedAsRecorded) expect([step, key.slice(1)]).toEqual([step, [null, null, 0, [], [], null]]);
  // Every panel showing figures shows the current key's.
  const shown = await page.locator('[data-key]').evaluateAll((els) => els.map((e) => [e.className.split(' ')[0], (e as HTMLElement).dataset.key]));
  expect(shown.length).toBeGreaterThanOrEqual(3);
  for (const [panel, k] of shown) expect([step, panel, k]).toEqual([step, panel, keyText]);
  expect([step, await page.locator('[aria-busy=true]').evaluateAll((els) => els.map((e) => e.className))]).toEqual([step, []]);
  // The figures are the CLI's for that key.
  const { index } = await page.evaluate<{ index: number }>('window.splitscope.cursor()');
  const args = argsOf(key);
  const end = cli(args);
  expect([step, await page.evaluate<Stats>('window.splitscope.stats()')]).toEqual([step, cli([...args, '--until', String(index)]).stats]);
  const endShown = Object.fromEntries(await page.locator('[data-end-stat]').evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset.endStat, Number((e as HTMLElement).dataset.value)])));
  for (const [stat, value] of Object.entries(endShown)) expect([step, stat, value]).toEqual([step, stat, end.stats[stat]]);
  // The stack view, when open: at the cursor.
  const stacks = page.locator('details.stacks[open]');
  if ((await stacks.count()) > 0) expect([step, await stacks.getAttribute('data-at')]).toEqual([step, String(index)]);
  // The OOM box: at an OOM of this replay.
  const box = page.locator('.oom-box');
  if ((await box.count()) > 0) {
    const at = Number(await box.getAttribute('data-request'));
    expect([step, at, end.ooms.map((o) => o.request)]).toEqual([step, index, expect.arrayContaining([index])]);
  }
  // The tuning guide's current config: the replay on screen.
  const current = page.locator('.guide-current');
  if ((await current.count()) > 0) {
    expect([step, Number(await current.getAttribute('data-peak'))]).toEqual([step, end.stats['reserved_bytes.all.peak']]);
    expect([step, await current.getAttribute('data-first-oom')]).toEqual([step, String(end.ooms[0]?.request ?? '')]);
  }
  // The comparison: each config replayed under the rest of the key.
  const rows = await page.locator('.compare-table tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({ conf: (tr as HTMLElement).dataset.conf!, peak: Number(tr.querySelector<HTMLElement>('[data-stat="reserved_bytes.all.peak"]')!.dataset.value) })),
  );
  for (const row of rows) {
    const want = cli([...argsOf([key[0], row.conf, key[2], key[3], key[4], key[5], key[6]])]).stats['reserved_bytes.all.peak'];
    expect([step, row.conf, row.peak]).toEqual([step, row.conf, want]);
  }
  // No verdict past the end of a recording that ends at its OOM.
  if (file.endsAtOom) expect([step, (await page.locator('main').textContent())!.match(/.{0,60}(helps here|avoids OOM|Try .* first).{0,60}/)?.[0] ?? null]).toEqual([step, null]);
}

test(`a seeded walk of ${STEPS} user steps: every panel shows the current key's figures, equal to the CLI's`, async () => {
  const random = prng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  await openFile(FILES[0]!);
  await check('open the OOM dump', true);
  const done: string[] = [];
  /** Every kind of step once, in a seeded order, then seeded draws by weight. */
  let order: string[] = [];
  for (let i = 0; i < STEPS; i++) {
    const actions: [string, number, () => Promise<boolean>][] = [
      // The OOM dump twice as often as the others: it is the file whose verdicts must stop at its end.
      ['open', 3, async () => (await openFile(pick([...FILES, FILES[0]!])), true)],
      ['slider', 4, async () => {
        const slider = page.getByRole('slider', { name: /max_split/ });
        await slider.focus();
        await slider.press(pick(['ArrowLeft', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageDown']));
        return false;
      }],
      ['conf', 3, async () => {
        const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true });
        await field.fill(pick(CONFS));
        await field.press('Enter');
        return false;
      }],
      ['cap', 2, async () => (await page.getByLabel('Memory cap (capacity)').selectOption(pick(CAPS)), false)],
      ['compare', 2, async () => {
        const close = page.getByRole('button', { name: 'Close comparison' });
        if ((await close.count()) > 0) await close.click();
        else await page.getByRole('button', { name: 'Compare configs…' }).click();
        return false;
      }],
      ['insert', 1, async () => (await page.getByRole('button', { name: 'Insert empty_cache()' }).click(), false)],
      ['seek', 3, async () => {
        const { total } = await page.evaluate<{ total: number }>('window.splitscope.cursor()');
        await page.evaluate(`window.splitscope.seek(${Math.floor(random() * total)})`);
        return false;
      }],
      ['link', 2, async () => {
        await ready();
        // The link a user copies; opened in a fresh page.
        const link = await page.evaluate<string>('window.splitscope.link()');
        const name = file.path.split('/').pop()!;
        await newPage(link);
        const source = decodeLink(new URL(link).hash)?.source;
        if (source?.kind === 'file' && source.data === undefined) {
          // A file too large for the link: the page asks for it, and shows nothing else meanwhile.
          await page.locator('.awaiting').waitFor();
          expect(await page.locator('.source-line').count()).toBe(0);
          await page.locator('.awaiting input[type=file]').setInputFiles({ name, mimeType: 'application/gzip', buffer: readFileSync(file.path) });
        }
        await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(name)}`, undefined, { timeout: 60_000 });
        return false;
      }],
      ['device', 1, async () => {
        const select = page.getByLabel('device', { exact: true });
        if ((await select.count()) === 0) {
          // A snapshot of one GPU: the one with two, first (as recorded), then its other device.
          await openFile(FILES.find((f) => f.path.includes('two_devices'))!);
          await check(`the two-device snapshot, before its device switch`, true);
        }
        const now = await select.inputValue();
        await select.selectOption(now === '0' ? '1' : '0');
        return false;
      }],
      ['as recorded', 1, async () => {
        const reset = page.getByRole('button', { name: /As recorded/ });
        if ((await reset.count()) > 0) await reset.click();
        return false;
      }],
      ['stacks', 1, async () => (await page.getByText('Which code holds the memory').click(), false)],
    ];
    // The first steps on the OOM dump, each kind once (opening another file last).
    if (i === 0) order = [...actions.map(([name]) => name).filter((n) => n !== 'open' && n !== 'device').sort(() => random() - 0.5), 'open', 'device'];
    let r = random() * actions.reduce((n, [, w]) => n + w, 0);
    const [name, , act] = i < order.length ? actions.find(([n]) => n === order[i])! : (actions.find(([, w]) => (r -= w) < 0) ?? actions[0]!);
    const asRecorded = await act();
    const step = `step ${i} (${name}) on ${file.path.split('/').pop()}`;
    done.push(step);
    await check(step, asRecorded);
  }
  console.log(done.join('\n'));
  expect(errors).toEqual([]);
});
