// Recordings beside the open one: two snapshots compared show their peaks as the CLI reports them, and a
// three-file rank set shows three rows equal to the CLI's replays (the what-if too); a row opens its rank.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { formatSize } from '../../src/allocator/format-size';
import { openPage, SHOTS as shots } from './open-page';
import { decodeLink, encodeLink } from '../../src/state/link-codec';
import type { LinkState } from '../../src/state/link-schema';

const session = openPage();
const JOB = 'tests/fixtures/job';
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const file = (name: string) => ({ name, mimeType: 'application/gzip', buffer: readFileSync(`${JOB}/${name}`) });

function cli(name: string, ...args: string[]): Record<string, number> {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', `${JOB}/${name}`, ...args, '--json'], { encoding: 'utf8' })).stats;
}

test('two snapshots compared: their peaks as the CLI reports them, both timelines, the sites that differ', async () => {
  await session.page.setInputFiles('header input[type=file]', file('rank_0.pickle.gz'));
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_0.pickle.gz')`);
  await ready();
  await session.page.getByText('Other recordings').click();
  await session.page.locator('.recordings-actions input[type=file]').first().setInputFiles(file('rank_1.pickle.gz'));
  await ready();
  const table = session.page.getByRole('table', { name: 'Two recordings compared' });
  const cells = (figure: string) => table.locator(`td[data-figure="${figure}"]`).allTextContents();
  const [a, b] = [cli('rank_0.pickle.gz'), cli('rank_1.pickle.gz')];
  expect(await cells('peak reserved')).toEqual([formatSize(a['reserved_bytes.all.peak']!), formatSize(b['reserved_bytes.all.peak']!)]);
  expect(await cells('peak allocated')).toEqual([formatSize(a['allocated_bytes.all.peak']!), formatSize(b['allocated_bytes.all.peak']!)]);
  expect(await cells('OOMs')).toEqual([String(a['num_ooms']), String(b['num_ooms'])]);
  // Batch 8 against batch 4: the activations' sites grow.
  const diffs = session.page.getByRole('table', { name: 'Allocation sites at the peak, compared' }).locator('tbody tr');
  expect(await diffs.count()).toBeGreaterThan(3);
  expect(await diffs.first().locator('td').last().textContent()).toMatch(/^\+/);
  expect(await session.page.locator('.recordings-chart path.rc-allocated').count()).toBe(2);
  await session.page.locator('.recordings').screenshot({ path: `${shots}/recordings-compare.png` });
  // The share link carries the comparison (both files are small: they travel inside it).
  await expect.poll(() => session.page.evaluate<string>('window.splitscope.link()')).toMatch(/#v1=/);
  await ready();
  await new Promise((r) => setTimeout(r, 700)); // the address bar follows within 500 ms
  const link = await session.page.evaluate<string>('window.splitscope.link()');
  const again = await session.page.context().browser()!.newPage({ viewport: { width: 1280, height: 720 } });
  await again.goto(link);
  await again.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_0.pickle.gz')`);
  await again.evaluate('window.splitscope.ready()');
  const table2 = again.getByRole('table', { name: 'Two recordings compared' });
  await expect.poll(() => table2.locator('td[data-figure="peak reserved"]').allTextContents(), { timeout: 30_000 }).toEqual(await cells('peak reserved'));
  // A link whose compared snapshot was altered: the source opens, the comparison is left out, and said.
  const state = decodeLink(new URL(link).hash)!;
  const data = state.compareWith!.data!;
  const tampered = { ...state, compareWith: { ...state.compareWith!, data: data.slice(0, 100) + (data[100] === 'A' ? 'B' : 'A') + data.slice(101) } };
  await again.goto(link.split('#')[0] + encodeLink(tampered as LinkState));
  await again.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_0.pickle.gz')`);
  await again.evaluate('window.splitscope.ready()');
  await expect.poll(() => again.locator('.banner[role=alert]').textContent()).toMatch(/compares with \(rank_1\.pickle\.gz\) does not match its hash/);
  expect(await again.getByRole('table', { name: 'Two recordings compared' }).count()).toBe(0);
  await again.close();
  await session.page.locator('.recordings-head').getByRole('button', { name: 'close' }).click();
});

test('a rank set: one row per rank, in rank order, equal to the CLI; the what-if under the config; a row opens its rank', async () => {
  await session.page.locator('.recordings-actions input[type=file]').nth(1).setInputFiles([file('rank_2.pickle.gz'), file('rank_0.pickle.gz'), file('rank_1.pickle.gz')]);
  await ready();
  const rows = session.page.getByRole('table', { name: 'Ranks of one job' }).locator('tbody tr');
  expect(await rows.locator('th').allTextContents()).toEqual(['rank_0.pickle.gz', 'rank_1.pickle.gz', 'rank_2.pickle.gz']);
  for (let r = 0; r < 3; r++) {
    const want = cli(`rank_${r}.pickle.gz`);
    const row = rows.nth(r);
    expect(await row.locator('td[data-figure="peak reserved"]').textContent()).toBe(formatSize(want['reserved_bytes.all.peak']!));
    expect(await row.locator('td[data-figure="peak allocated"]').textContent()).toBe(formatSize(want['allocated_bytes.all.peak']!));
    expect(await row.locator('td[data-figure="OOMs"]').textContent()).toBe(String(want['num_ooms']));
  }
  // A config asked for: each rank's what-if, as the CLI replays it.
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:64');
  await field.press('Enter');
  await ready();
  for (let r = 0; r < 3; r++) {
    const want = cli(`rank_${r}.pickle.gz`, '--conf', 'max_split_size_mb:64');
    const base = cli(`rank_${r}.pickle.gz`);
    const [w, b] = [want['reserved_bytes.all.peak']!, base['reserved_bytes.all.peak']!];
    const verdict = want['num_ooms'] !== base['num_ooms'] ? (want['num_ooms']! < base['num_ooms']! ? 'helps' : 'hurts') : w === b ? 'same' : w < b ? 'helps' : 'hurts';
    const text = (await rows.nth(r).locator('td.what-if').textContent())!;
    expect(text.startsWith(`${formatSize(w)} `)).toBe(true);
    expect(text.endsWith(` ${verdict}`)).toBe(true);
  }
  await session.page.locator('.recordings').screenshot({ path: `${shots}/recordings-ranks.png` });
  await rows.nth(2).click();
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_2.pickle.gz')`);
  await ready();
  await field.fill('');
  await field.press('Enter');
  await ready();
});

test('a new config stops the rank digests it supersedes: two digest workers at most, the rows under the last config', async () => {
  // Six ranks (three rounds of two workers), and the page's CPU slowed (DevTools throttling slows its
  // workers too) so that the first configs' digests are still running when the next config comes, and
  // the last ones for seconds. (With three ranks the last digests ended 2.5-3 s in once replays got
  // faster: too close to the 2.5 s the check below waits.)
  const RANKS = 6;
  const big = readFileSync('tests/fixtures/random-s3__default.pickle.gz');
  const cdp = await session.page.context().newCDPSession(session.page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 3 });
  try {
    await session.page.locator('.recordings-actions input[type=file]').nth(1).setInputFiles(Array.from({ length: RANKS }, (_, r) => ({ name: `rank_${r}.pickle.gz`, mimeType: 'application/gzip', buffer: big })));
    const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
    for (const conf of ['max_split_size_mb:32', 'max_split_size_mb:64']) {
      await field.fill(conf);
      await field.press('Enter');
    }
    // Digest workers alive, sampled until the digests are done. Chromium ends a busy worker it was told
    // to terminate within about 2 s: past that, only the last config's (two at a time) may be running.
    const t0 = Date.now();
    const samples: [number, number][] = [];
    let done = false;
    const settled = ready().then(() => (done = true));
    while (!done) {
      samples.push([Date.now() - t0, session.page.workers().filter((w) => w.url().includes('digest-worker')).length]);
      await new Promise((r) => setTimeout(r, 50));
    }
    await settled;
    const late = samples.filter(([t]) => t > 2500).map(([, alive]) => alive);
    expect(late.some((alive) => alive > 0)).toBe(true);
    expect(Math.max(...late)).toBeLessThanOrEqual(2);
  } finally {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.detach();
  }
  const want = cli('../random-s3__default.pickle.gz', '--conf', 'max_split_size_mb:64');
  const rows = session.page.getByRole('table', { name: 'Ranks of one job' }).locator('tbody tr');
  for (let r = 0; r < RANKS; r++) expect((await rows.nth(r).locator('td.what-if').textContent())!.startsWith(`${formatSize(want['reserved_bytes.all.peak']!)} `)).toBe(true);
  await session.page.locator('.recordings-head').getByRole('button', { name: 'close' }).click();
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('');
  await field.press('Enter');
  await ready();
});

test('several files dropped on the page together are a rank set', async () => {
  const names = ['rank_1.pickle.gz', 'rank_0.pickle.gz', 'rank_2.pickle.gz'];
  const files = names.map((n) => ({ name: n, data: readFileSync(`${JOB}/${n}`).toString('base64') }));
  const transfer = await session.page.evaluateHandle((fs: { name: string; data: string }[]) => {
    const dt = new DataTransfer();
    for (const f of fs) dt.items.add(new File([Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))], f.name));
    return dt;
  }, files);
  await session.page.dispatchEvent('.app', 'drop', { dataTransfer: transfer });
  await ready();
  const rows = session.page.getByRole('table', { name: 'Ranks of one job' }).locator('tbody tr');
  expect(await rows.locator('th').allTextContents()).toEqual(['rank_0.pickle.gz', 'rank_1.pickle.gz', 'rank_2.pickle.gz']);
  expect(await rows.nth(0).locator('td[data-figure="peak reserved"]').textContent()).toBe(formatSize(cli('rank_0.pickle.gz')['reserved_bytes.all.peak']!));
});

test('a bad file beside the source, or in a rank set, is named with its problem; the rest stays', async () => {
  const junk = { name: 'junk.pickle', mimeType: 'application/octet-stream', buffer: Buffer.from('not a snapshot at all') };
  await session.page.setInputFiles('header input[type=file]', file('rank_0.pickle.gz'));
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_0.pickle.gz')`);
  await ready();
  await session.page.locator('.recordings-actions input[type=file]').first().setInputFiles(junk);
  await ready();
  await expect.poll(() => session.page.locator('.recordings .error').first().textContent()).toMatch(/^junk\.pickle: This is not a PyTorch memory snapshot/);
  expect(await session.page.locator('.source-line').textContent()).toContain('rank_0.pickle.gz');
  await session.page.getByRole('region', { name: 'Two recordings' }).getByRole('button', { name: 'close' }).click();
  await session.page.locator('.recordings-actions input[type=file]').nth(1).setInputFiles([file('rank_1.pickle.gz'), junk]);
  await ready();
  const rows = session.page.getByRole('table', { name: 'Ranks of one job' }).locator('tbody tr');
  expect(await rows.locator('th').allTextContents()).toEqual(['junk.pickle', 'rank_1.pickle.gz']);
  expect(await rows.nth(0).locator('td.error').textContent()).toMatch(/not a PyTorch memory snapshot/);
  expect(await rows.nth(1).locator('td[data-figure="peak reserved"]').textContent()).toBe(formatSize(cli('rank_1.pickle.gz')['reserved_bytes.all.peak']!));
  expect(session.errors).toEqual([]);
});
