// The OOM dumps users bring (an out-of-memory observer's _dump_snapshot at the OOM), opened as a user
// opens them: the page opens at the OOM, with the OOM box (which request, PyTorch's message wrapped,
// why) in view at 1280x720, the cap marked on the device bar and the timeline, and no verdict past the
// last recorded request. One request-numbering convention (from 0) across the CLI and the page.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { decodeLink } from '../../src/state/link-codec';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const REAL = 'tests/fixtures/real';
/** Every OOM dump among the fixtures: ../shared/traces-real's and those recorded for splitscope. */
const DUMPS = [
  'oom__default.pickle.gz',
  'oom__max_split_size_mb=128.pickle.gz',
  'oom__default__seed1000.pickle.gz',
  'oom__expandable_segments=True.pickle.gz',
  'oom__garbage_collection_threshold=0.6+max_split_size_mb=256.pickle.gz',
  'vit_oom__default.pickle.gz',
  'vit_oom__expandable_segments=True.pickle.gz',
  'vit_oom__max_split_size_mb=128.pickle.gz',
];

type Stats = Record<string, number>;
type Replay = { stats: Stats; ooms: { request: number }[] };
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const cursor = () => session.page.evaluate<{ index: number; total: number }>('window.splitscope.cursor()');

function cli(file: string, ...args: string[]): Replay {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', `${REAL}/${file}`, ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function open(file: string): Promise<void> {
  await session.page.setInputFiles('header input[type=file]', { name: file, mimeType: 'application/gzip', buffer: readFileSync(`${REAL}/${file}`) });
  await session.page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(file)}`, undefined, { timeout: 60_000 });
  await ready();
}

test("opening a snapshot pauses the GPU stress run of the built-in workload (the snapshot's replays need the cores)", async () => {
  const stress = session.page.getByRole('region', { name: 'GPU stress' });
  // The page opens on the built-in workload with GPU stress playing ...
  await stress.getByRole('button', { name: 'Pause' }).waitFor({ timeout: 60_000 });
  await open(DUMPS[0]!);
  // ... and a snapshot opened pauses it; its panel resumes it.
  expect(await stress.getByRole('button', { name: 'Pause' }).count()).toBe(0);
  expect(await stress.getByRole('button', { name: 'Play' }).count()).toBe(1);
});

test.each(DUMPS)('%s opens at its OOM, the OOM box in view, the cap marked, no verdict past the recording', async (file) => {
  const page = session.page;
  await open(file);
  const want = cli(file);
  const oom = want.ooms[0]!.request;
  expect((await cursor()).index).toBe(oom);
  const box = page.locator('.oom-box');
  expect(await box.getAttribute('data-request')).toBe(String(oom));
  expect(await box.locator('h2').textContent()).toBe(`Request ${oom.toLocaleString('en-US')} failed: CUDA out of memory`);
  // In view without scrolling, PyTorch's message wrapped inside the box (not cut off).
  const rect = (await box.boundingBox())!;
  expect(rect.y).toBeGreaterThanOrEqual(0);
  expect(rect.y + rect.height).toBeLessThanOrEqual(720);
  const message = box.locator('.oom-message');
  expect(await message.textContent()).toMatch(/^CUDA out of memory\. Tried to allocate /);
  expect(await message.evaluate((e) => e.scrollWidth <= e.clientWidth + 1 && e.getBoundingClientRect().right <= e.parentElement!.getBoundingClientRect().right)).toBe(true);
  expect(await box.locator('.oom-why li').count()).toBeGreaterThan(0);
  expect(await box.textContent()).toMatch(/The recording ends at this request/);
  // The cap the recording shows, on the device bar (its end marked) and as a line on the timeline.
  const cap = Number(await page.locator('.device-bar .bar.capped').getAttribute('data-cap'));
  expect(cap).toBeGreaterThan(5 * 2 ** 30);
  expect(await page.locator('.device-bar [data-figure="cap-used"]').textContent()).toMatch(/of (6|10)\.00 GiB/);
  expect(await page.locator('.tl-cap').getAttribute('visibility')).toBeNull();
  // No verdict reaches past the last recorded request.
  expect((await page.locator('main').textContent())!.match(/.{0,60}(helps here|avoids OOM|Try .* first).{0,60}/)?.[0] ?? null).toBeNull();
  await page.screenshot({ path: `${shots}/oom-dump-${file.replace(/\.pickle\.gz$/, '')}.png` });
});

test("the ViT dump's first-ranked fix is a line to copy, with what its replay shows and no more", async () => {
  const page = session.page;
  await open('vit_oom__default.pickle.gz');
  const fix = page.locator('.oom-box .oom-fix');
  await expect.poll(() => fix.count()).toBe(1);
  const conf = (await fix.getAttribute('data-conf'))!;
  expect(await fix.locator('.export-line code').textContent()).toBe(`export PYTORCH_CUDA_ALLOC_CONF=${conf}`);
  // Its replay has no OOM through the dump's last request (the program really ran out of memory later
  // under expandable_segments:True and max_split_size_mb:128: see the MANIFEST), and the box says no more.
  expect(cli('vit_oom__default.pickle.gz', '--conf', conf).ooms).toEqual([]);
  expect(await fix.textContent()).toMatch(/no OOM through request 15,882, where the recording ends; whether the run would then have finished is unknown/);
  // The guide, the suggestion and the comparison say "in the recorded part", never that the OOM is avoided.
  expect(await page.locator('.guide .badge').first().textContent()).toBe('better in the recorded part');
  expect(await page.locator('.advice').textContent()).toMatch(/no OOM through request 15,882, where the recording ends/);
  await page.getByRole('button', { name: 'Compare configs…' }).click();
  await ready();
  expect(await page.locator('.compare-sentence').textContent()).toMatch(/has no OOM through request 15,882, where the recording ends/);
  await page.getByRole('button', { name: 'Close comparison' }).click();
  await page.locator('.oom-box').screenshot({ path: `${shots}/oom-box-vit.png` });
});

test('one request numbering, from 0, in the CLI, the page and its links', async () => {
  const page = session.page;
  await open('vit_oom__default.pickle.gz');
  const file = 'vit_oom__default.pickle.gz';
  const oom = cli(file).ooms[0]!.request;
  // The CLI's OOM request is the page's cursor, the OOM box's, the OOM list's and the timeline's.
  expect((await cursor()).index).toBe(oom);
  expect(await page.locator('.oom-box h2').textContent()).toContain(`Request ${oom.toLocaleString('en-US')} `);
  expect(await page.locator('.tl-position').textContent()).toMatch(new RegExp(`^request ${oom.toLocaleString('en-US')} / `));
  expect(await page.getByRole('slider', { name: 'Cursor (request)' }).getAttribute('aria-valuenow')).toBe(String(oom));
  await page.locator('details.ooms > summary').click();
  expect(await page.locator('details.ooms li').first().getAttribute('data-request')).toBe(String(oom));
  expect(await page.locator('details.ooms li button').first().textContent()).toBe(`request ${oom.toLocaleString('en-US')}`);
  // --until N is the state after request N, as the page's cursor N shows it.
  const at = 9000;
  await page.evaluate(`window.splitscope.seek(${at})`);
  await ready();
  expect(await page.evaluate<Stats>('window.splitscope.stats()')).toEqual(cli(file, '--until', String(at)).stats);
  expect(await page.locator('.stats-panel h2').textContent()).toBe(`After request ${at.toLocaleString('en-US')}`);
  // An empty_cache() inserted at cursor N is --empty-cache-at N, and the link carries N.
  await page.getByRole('button', { name: 'Insert empty_cache()' }).click();
  await ready();
  expect(await page.getByRole('list', { name: 'Inserted calls' }).textContent()).toContain(`after ${at.toLocaleString('en-US')}`);
  expect(await page.evaluate<Stats>('window.splitscope.stats()')).toEqual(cli(file, '--empty-cache-at', String(at), '--until', String(at)).stats);
  await page.waitForFunction(`window.splitscope.link().endsWith(location.hash) && location.hash.length > 10`);
  const state = decodeLink(new URL(await page.evaluate<string>('window.splitscope.link()')).hash)!;
  expect([state.cursor, state.emptyCacheAfter]).toEqual([at, [at]]);
  await page.getByRole('button', { name: 'remove all' }).click();
  await ready();
  expect(session.errors).toEqual([]);
});

test("a run that survived OOMs of cuDNN workspaces opens as one that finished: no OOM box, its notes say PyTorch caught them", async () => {
  const page = session.page;
  const file = 'resnet-45__default__cap2.28GiB.pickle.gz'; // resnet50 at batch 45 under a 2.28 GiB cap
  await page.setInputFiles('header input[type=file]', { name: file, mimeType: 'application/gzip', buffer: readFileSync(`tests/fixtures/sizes/${file}`) });
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(file)}`, undefined, { timeout: 60_000 });
  await ready();
  expect(await page.locator('.oom-box').count()).toBe(0);
  const notes = await page.locator('.notes').textContent();
  expect(notes).toContain("41 OOMs of the recording came from cuDNN convolutions' workspaces, which PyTorch catches");
  expect(notes).toMatch(/41 cuDNN workspace allocations did not fit \(the first at request [\d,]+\)\. PyTorch catches each such OOM/);
});

test('the config the last file was viewed under is offered for the next one, unless that one was recorded under it', async () => {
  const page = session.page;
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  const note = page.locator('.note.carried');
  await open(DUMPS[0]!); // recorded under the defaults
  await field.fill('max_split_size_mb:128');
  await field.press('Enter');
  await ready();
  await open(DUMPS[5]!); // also the defaults': the config is offered
  // It was recorded under the defaults and viewed under max_split_size_mb:128: said as such, not as how it ran.
  await expect.poll(() => note.textContent()).toContain('you viewed');
  expect(await note.textContent()).toMatch(/you viewed \S+ under PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\./);
  expect(await note.textContent()).not.toContain('ran under');
  await note.getByRole('button', { name: 'Apply that here too' }).click();
  await expect.poll(() => field.inputValue()).toBe('max_split_size_mb:128');
  await ready();
  await open(DUMPS[1]!); // recorded under max_split_size_mb:128 itself: nothing to offer
  await expect.poll(() => page.locator('.notes').getAttribute('aria-busy')).toBe('false');
  expect(await note.count()).toBe(0);
});

test("the page's notes name its own controls, not the CLI's flags", async () => {
  const page = session.page;
  // A run recorded under a cap it never ran out under: the replay without it needs segments the recording never made.
  const file = 'llama-seq-745__default__cap2.65GiB.pickle.gz';
  await page.setInputFiles('header input[type=file]', { name: file, mimeType: 'application/gzip', buffer: readFileSync(`tests/fixtures/sizes/${file}`) });
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(file)}`, undefined, { timeout: 60_000 });
  await ready();
  await expect.poll(() => page.locator('.notes').getAttribute('aria-busy')).toBe('false');
  const notes = (await page.locator('.notes').textContent())!;
  expect(notes).toContain('a memory cap in the recording that was not given (the Memory cap control)');
  expect(notes).not.toMatch(/--[a-z]/);
});
