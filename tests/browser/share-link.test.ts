// Share links in real Chromium: a view's link opened in a fresh browser context shows the same
// stats, cursor and picture; Back undoes a config change; a tampered or 5 MB link gives a clear
// message and the default view.
import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect, inject, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { decodeLink, encodeLink } from '../../src/state/link-codec';
import type { LinkState } from '../../src/state/link-schema';
import { formatSize } from '../../src/allocator/format-size';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
type Stats = Record<string, number>;
const stats = (page: Page) => page.evaluate<Stats>('window.splitscope.stats()');
const cursor = (page: Page) => page.evaluate<{ index: number; total: number }>('window.splitscope.cursor()');
const ready = (page: Page) => page.evaluate<void>('window.splitscope.ready()');
const shotHash = async (page: Page, selector: string) => createHash('sha256').update(await page.locator(selector).screenshot()).digest('hex');

async function freshPage(url: string): Promise<Page> {
  const context = await session.page.context().browser()!.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(`'splitscope' in window`);
  return page;
}

test('a link reproduces the view in a fresh browser context', async () => {
  const page = session.page;
  await page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready(page);
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:256');
  await field.press('Enter');
  await ready(page);
  await page.getByLabel('Memory cap (capacity)').selectOption({ label: '24 GB card (RTX 3090/4090, 24 GiB)' });
  await ready(page);
  await page.locator('h1').click();
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(`window.splitscope.cursor().index === window.splitscope.cursor().total - 6`);
  await ready(page);
  const link = await page.evaluate<string>('window.splitscope.link()');
  expect(link.length).toBeLessThan(2000); // the sample travels by name, not embedded

  const other = await freshPage(link);
  await other.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await other.waitForFunction(`window.splitscope.cursor().index === ${(await cursor(page)).index}`);
  await ready(other);
  expect(await stats(other)).toEqual(await stats(page));
  expect(await other.getByLabel('PYTORCH_CUDA_ALLOC_CONF').inputValue()).toBe('max_split_size_mb:256');
  // The same layout above the stats (the sweep's suggestion done in both) before comparing pixels.
  await Promise.all([page.evaluate('window.splitscope.sweep()'), other.evaluate('window.splitscope.sweep()')]);
  expect(await shotHash(other, '.stats-panel')).toBe(await shotHash(page, '.stats-panel'));
  await other.screenshot({ path: `${shots}/link-opened.png` });
  await other.context().close();
});

test('a link keeps the segment map\'s zoom, the pinned allocation and the open panels', async () => {
  const page = session.page;
  // Panels first: a click outside the segment map unpins its block.
  await page.getByText('Export…').click();
  await page.locator('.guide summary').click();
  expect(await page.locator('details.guide').getAttribute('open')).toBeNull();
  const canvas = page.locator('canvas.segment-map-canvas');
  await canvas.focus();
  for (const key of ['+', '+', '+', 'ArrowRight']) await canvas.press(key);
  // From block to block until an allocation is pinned (a link names allocations, not free blocks).
  const tip = page.locator('.segment-map-tip.pinned');
  for (let i = 0; i < 200 && !(await tip.count() && (await tip.locator('.tip-title').textContent())?.startsWith('allocated')); i++) await canvas.press('[');
  await ready(page);
  expect(await tip.locator('.tip-title').textContent()).toMatch(/^allocated/);
  await page.waitForFunction(`location.hash === window.splitscope.link().slice(window.splitscope.link().indexOf('#'))`, undefined, { timeout: 10_000 });
  const link = await page.evaluate<string>('window.splitscope.link()');
  const other = await freshPage(link);
  await other.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready(other);
  await expect.poll(() => other.locator('.segment-map-tip.pinned').count()).toBe(1);
  expect(await other.locator('.segment-map-tip.pinned').textContent()).toBe(await tip.textContent());
  expect(await other.locator('g.segment-map-axis').getAttribute('data-domain')).toBe(await page.locator('g.segment-map-axis').getAttribute('data-domain'));
  expect(await other.locator('details.export').getAttribute('open')).not.toBeNull();
  expect(await other.locator('details.guide').getAttribute('open')).toBeNull();
  // The same picture once both have drawn the pinned block (a frame may follow the tip's showing)
  // and the same layout (the sweep's suggestion done in both).
  await Promise.all([page.evaluate('window.splitscope.sweep()'), other.evaluate('window.splitscope.sweep()')]);
  // Both maps in view the same way (the page above them, the story of the peak, can put one past the
  // window's edge, and a screenshot scrolled to it mid-frame differs).
  for (const p of [page, other]) await p.locator('section.segment-map').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  const same = async (): Promise<boolean> => {
    await Promise.all([ready(page), ready(other)]);
    const [a, b] = await Promise.all([shotHash(other, 'canvas.segment-map-canvas'), shotHash(page, 'canvas.segment-map-canvas')]);
    return a === b;
  };
  await expect.poll(same, { timeout: 20_000 }).toBe(true);
  await other.context().close();
});

test('a link to a file too large to travel asks for it, and the file opens as the link says', async () => {
  // Both sides in fresh contexts: the tests around this one go on from the session page's view.
  const page = await freshPage(session.page.url().split('#')[0]!);
  const file = 'tests/fixtures/train_gpt2-n12__max_split_size_mb=128.pickle.gz'; // 270 KB: past the embedding limit
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('max_split_size_mb=128')`);
  await ready(page);
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:64');
  await field.press('Enter');
  await ready(page);
  await page.waitForFunction(`location.hash.length > 10 && window.splitscope.link() === location.href`);
  const link = await page.evaluate<string>('window.splitscope.link()');
  expect(link.length).toBeLessThan(2000); // named by its hash, not embedded
  // The hash worker's SHA-256 (taken after the first view) is the file's.
  const named = decodeLink(new URL(link).hash)!.source;
  expect(named).toMatchObject({ kind: 'file', sha256: createHash('sha256').update(readFileSync(file)).digest('hex') });
  expect(await page.getByRole('button', { name: 'Copy link' }).isEnabled()).toBe(true);

  const other = await freshPage(link);
  await expect.poll(() => other.getByRole('alert').textContent()).toMatch(/too large to travel inside a link\. Open that file/);
  // Meanwhile nothing of another source is shown under the link's settings.
  expect(await other.locator('.source-line').count()).toBe(0);
  expect(await other.evaluate('window.splitscope.cursor().total')).toBe(0);
  await other.setInputFiles('input[type=file]', file);
  await other.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('max_split_size_mb=128')`);
  await ready(other);
  expect(await other.getByLabel('PYTORCH_CUDA_ALLOC_CONF').inputValue()).toBe('max_split_size_mb:64');
  expect(await stats(other)).toEqual(await stats(page));
  await other.context().close();
  await page.context().close();
});

test('a file chosen while the built-in workload opens shows where its link says, and does not play', async () => {
  const page = await freshPage(session.page.url().split('#')[0]!);
  const file = 'tests/fixtures/train_gpt2-n12__default.pickle.gz'; // past the embedding limit
  await page.setInputFiles('input[type=file]', file);
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('train_gpt2-n12__default')`);
  await ready(page);
  await page.evaluate('window.splitscope.seek(500)');
  await ready(page);
  await page.waitForFunction(`location.hash.length > 10 && window.splitscope.link() === location.href`);
  const link = await page.evaluate<string>('window.splitscope.link()');
  await page.context().close();

  // The replay worker answers each call a second late, so that the file is chosen before the built-in
  // workload's first replay answers, and that answer comes after the file replaced the workload.
  const context = await session.page.context().browser()!.newContext({ viewport: { width: 1280, height: 720 } });
  await context.route(/replay-worker-[^/]*\.js$/, async (route) => {
    const response = await route.fetch();
    const late = 'const __post = self.postMessage.bind(self); self.postMessage = (...a) => void setTimeout(() => __post(...a), 1000);\n';
    await route.fulfill({ response, body: late + (await response.text()) });
  });
  const other = await context.newPage();
  await other.goto(link);
  await other.waitForFunction(`'splitscope' in window`);
  await other.setInputFiles('input[type=file]', file);
  await other.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('train_gpt2-n12__default')`, undefined, { timeout: 30_000 });
  await ready(other);
  await new Promise((r) => setTimeout(r, 2500)); // a playing cursor would have moved by now
  expect((await cursor(other)).index).toBe(500);
  expect(await other.locator('.tl-play').getAttribute('aria-label')).toBe('Play');
  await context.close();
});

test('while the cursor moves the address bar waits, and takes the cursor where it rests', async () => {
  const page = session.page;
  await page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready(page);
  await page.waitForFunction(`location.hash.length > 10 && window.splitscope.link() === location.href`);
  const { total } = await cursor(page);
  const before = await page.evaluate<string>('location.hash');
  // A scrub: a seek every 150 ms for 1.5 s, each past the 500 ms the address bar waits for.
  for (let i = 1; i <= 10; i++) {
    await page.evaluate(`window.splitscope.seek(${Math.floor((total * i) / 12)})`);
    await page.waitForTimeout(150);
    expect(await page.evaluate<string>('location.hash')).toBe(before);
  }
  const rest = Math.floor((total * 10) / 12);
  await page.waitForFunction(`window.splitscope.cursor().index === ${rest}`);
  await expect.poll(async () => decodeLink(await page.evaluate<string>('location.hash'))?.cursor, { timeout: 5000 }).toBe(rest);
});

test('Back undoes a config change', async () => {
  const page = session.page;
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:256');
  await field.press('Enter');
  await ready(page);
  await page.waitForFunction(`window.splitscope.link().endsWith(location.hash) && location.hash.length > 10`);
  const before = await stats(page);
  await field.fill('max_split_size_mb:64');
  await field.press('Enter');
  await ready(page);
  expect(await stats(page)).not.toEqual(before);
  // The address bar follows once the config rests.
  await page.waitForFunction(`window.splitscope.link().endsWith(location.hash)`);
  await page.goBack();
  await page.waitForFunction(`document.querySelector('input.conf')?.value === 'max_split_size_mb:256'`);
  await ready(page);
  await page.waitForFunction(`window.splitscope.stats()['reserved_bytes.all.peak'] === ${before['reserved_bytes.all.peak']}`);
});

// Chromium refuses to navigate to URLs over 2 MB (a 5 MB link never reaches the page; the decoder's
// own refusal of one is a unit test): 1.5 MB is the largest oversized link a page can be given.
test('a tampered link and an oversized link give a message and the default view', async () => {
  for (const [hash, message] of [
    ['#v1=eJyrVkrLz1eyUkpKLFKqBQAdegQ0' + 'x!', /damaged/],
    ['#v1=' + 'A'.repeat(1_500_000), /characters long/],
  ] as const) {
    const page = await freshPage(inject('baseUrl') + hash);
    const alert = page.locator('.banner[role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(message);
    // The default view: the built-in workload, playing.
    await page.waitForFunction(`window.splitscope.cursor().index > 0`, undefined, { timeout: 60_000 });
    await page.context().close();
  }
});

/** A snapshot recorded under large_segment_size_mb:40 (which raises max_split_size_mb's floor to 40 MiB in 2.11), 144 KB: it travels inside a link. */
const LSS40 = 'tests/fixtures/real/lss40__large_segment_size_mb=40.pickle.gz';
const cliStats = (...args: string[]): Stats =>
  JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', LSS40, ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).stats;
let lss40Link = '';

test("large_segment_size_mb:40: the slider's left end is 40 MiB, it replays, and its link (the snapshot inside) opens that view in a fresh page", async () => {
  const page = await freshPage(session.page.url().split('#')[0]!);
  await page.setInputFiles('header input[type=file]', LSS40);
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === 'lss40__large_segment_size_mb=40.pickle.gz'`);
  await ready(page);
  const slider = page.getByRole('slider', { name: /max_split/ });
  expect(await slider.getAttribute('aria-valuemin')).toBe('40');
  await slider.focus();
  await slider.press('Home');
  expect(await slider.getAttribute('aria-valuenow')).toBe('40');
  await ready(page);
  expect(await page.locator('.conf-error').textContent()).toBe('');
  expect(await page.locator('.banner[role=alert]').count()).toBe(0);
  const conf = 'large_segment_size_mb:40,max_split_size_mb:40';
  expect(await stats(page)).toEqual(cliStats('--conf', conf, '--until', String((await cursor(page)).index)));
  // A config PyTorch refuses, typed in, changes nothing: not the view, not the link.
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true });
  await page.waitForFunction(`window.splitscope.link().endsWith(location.hash) && location.hash.length > 10`);
  const before = await page.evaluate<string>('window.splitscope.link()');
  await field.fill('large_segment_size_mb:40,max_split_size_mb:20');
  await field.press('Enter');
  await ready(page);
  expect(await page.locator('.conf-error').textContent()).toMatch(/max_split_size_mb too small, must be >= 40 \(got 20\)/);
  expect(await page.evaluate<string>('window.splitscope.link()')).toBe(before);
  // The link carries what was applied, with the snapshot inside.
  const state = decodeLink(new URL(before).hash)!;
  expect(state.conf).toBe(conf);
  expect(state.source.kind === 'file' && state.source.data !== undefined).toBe(true);
  const shown = await stats(page);
  const other = await freshPage(before);
  await other.waitForFunction(`document.querySelector('.source-line strong')?.textContent === 'lss40__large_segment_size_mb=40.pickle.gz'`);
  await ready(other);
  expect(await stats(other)).toEqual(shown);
  expect(await other.getByRole('slider', { name: /max_split/ }).getAttribute('aria-valuenow')).toBe('40');
  expect(await other.locator('.banner[role=alert]').count()).toBe(0);
  lss40Link = before;
  await other.context().close();
  await page.context().close();
});

test('a link whose config is refused opens its snapshot as recorded and says what it could not apply; nothing else it holds is lost', async () => {
  const state = decodeLink(new URL(lss40Link).hash)!;
  const refused: LinkState = { ...state, conf: 'large_segment_size_mb:40,max_split_size_mb:20', compare: ['max_split_size_mb:8', 'expandable_segments:True'], find: '>64MiB' };
  const page = await freshPage(lss40Link.split('#')[0]! + encodeLink(refused));
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === 'lss40__large_segment_size_mb=40.pickle.gz'`);
  await ready(page);
  const alert = (await page.locator('.banner[role=alert]').textContent())!;
  expect(alert).toMatch(/This link's config "large_segment_size_mb:40,max_split_size_mb:20" is refused \(CachingAllocator option max_split_size_mb too small, must be >= 40 \(got 20\)[^)]*\): lss40__large_segment_size_mb=40\.pickle\.gz opens as recorded\./);
  expect(alert).toMatch(/compares the config "max_split_size_mb:8", which is refused .* the comparison is left out/);
  // As recorded, at the link's cursor, with its search.
  expect(JSON.parse(await page.evaluate<string>('window.splitscope.key()')).slice(1, 3)).toEqual([null, null]);
  expect((await cursor(page)).index).toBe(state.cursor ?? (await cursor(page)).total - 1);
  expect(await stats(page)).toEqual(cliStats('--until', String((await cursor(page)).index)));
  expect(await page.locator('input[type=search]').inputValue()).toBe('>64MiB');
  expect(await page.locator('.compare').count()).toBe(0);
  await page.context().close();
});

test('a link cut short says so and opens the default view', async () => {
  const cut = lss40Link.slice(0, Math.floor(lss40Link.length / 2));
  const page = await freshPage(cut);
  const alert = page.locator('.banner[role=alert]');
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/damaged .*cut short/);
  await page.waitForFunction(`window.splitscope.cursor().index > 0`, undefined, { timeout: 60_000 });
  await page.context().close();
});

test("a link's file prompt: another file is named beside the link's and opens only as the user says; the link's own opens as the link says", async () => {
  const [a, b] = ['tests/fixtures/train_gpt2-n12__max_split_size_mb=128.pickle.gz', 'tests/fixtures/train_gpt2-n12__default.pickle.gz'].map((path) => {
    const buffer = readFileSync(path); // both past the embedding limit: named by hash
    return { name: path.split('/').pop()!, mimeType: 'application/gzip', buffer };
  }) as [{ name: string; mimeType: string; buffer: Buffer }, { name: string; mimeType: string; buffer: Buffer }];
  const conf = 'max_split_size_mb:64';
  const state: LinkState = { v: 1, source: { kind: 'file', name: a.name, sha256: createHash('sha256').update(a.buffer).digest('hex'), size: a.buffer.length }, conf, capacityBytes: null, cursor: null };
  const link = inject('baseUrl') + encodeLink(state);
  const shownName = (page: Page) => page.evaluate<string | null>(`document.querySelector('.source-line strong')?.textContent ?? null`);
  /** B chosen for A's link: said so, both named with their sizes, nothing open. */
  const chooseB = async (page: Page, label: string) => {
    await page.getByLabel(label, { exact: true }).setInputFiles(b);
    const prompt = page.locator('.awaiting');
    await expect.poll(() => prompt.textContent()).toContain(`${b.name} (${formatSize(b.buffer.length)}) is not the file this link names: it names ${a.name} (${formatSize(a.buffer.length)})`);
    expect(await page.locator('.source-line').count()).toBe(0);
    expect(await page.evaluate('window.splitscope.cursor().total')).toBe(0);
  };

  // Choose again: the prompt stays (B once more), and A opens under the link's settings, as before.
  let page = await freshPage(link);
  await chooseB(page, `Open ${a.name}…`);
  await page.locator('.awaiting').screenshot({ path: `${shots}/link-file-not-the-links.png` });
  await chooseB(page, 'Choose again…');
  await page.getByLabel('Choose again…', { exact: true }).setInputFiles(a);
  await expect.poll(() => shownName(page), { timeout: 60_000 }).toBe(a.name);
  await ready(page);
  expect(await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true }).inputValue()).toBe(conf);
  expect(await page.locator('.awaiting').count()).toBe(0);
  await page.context().close();

  // B under the link's settings, and B as recorded.
  for (const how of ["under the link's settings", 'as recorded'] as const) {
    page = await freshPage(link);
    await chooseB(page, `Open ${a.name}…`);
    await page.getByRole('button', { name: how === 'as recorded' ? 'Open it as recorded' : `Open ${b.name} ${how}` }).click();
    await expect.poll(() => shownName(page), { timeout: 60_000 }).toBe(b.name);
    await ready(page);
    expect(JSON.parse(await page.evaluate<string>('window.splitscope.key()'))[1]).toBe(how === 'as recorded' ? null : conf);
    if (how !== 'as recorded') expect(await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true }).inputValue()).toBe(conf);
    expect(await page.locator('.awaiting').count()).toBe(0);
    await page.context().close();
  }
});

test('no uncaught errors on the page', () => {
  expect(session.errors).toEqual([]);
});
