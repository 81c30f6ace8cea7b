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
  // Six ranks (three rounds of two workers): the first config's digests are still being made when the
  // next config comes. Everything below waits on the page's state (which digests run, under which
  // config), not on time: a slow machine makes it slower, not wrong.
  const RANKS = 6;
  const big = readFileSync('tests/fixtures/random-s3__default.pickle.gz');
  type Digest = { file: string; conf: string | null };
  const digests = () => session.page.evaluate<Digest[]>('window.splitscope.digests()');
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:32');
  await field.press('Enter');
  await session.page.locator('.recordings-actions input[type=file]').nth(1).setInputFiles(Array.from({ length: RANKS }, (_, r) => ({ name: `rank_${r}.pickle.gz`, mimeType: 'application/gzip', buffer: big })));
  // The first config's digests are being made ...
  await expect.poll(digests, { timeout: 60_000, interval: 20 }).toContainEqual(expect.objectContaining({ conf: 'max_split_size_mb:32' }));
  // ... when the next config comes.
  await field.fill('max_split_size_mb:64');
  await field.press('Enter');
  // From then on no digest of the superseded config runs once the page has taken the new one in (its
  // workers are ended, its waiting digests never start), and never more than two at once.
  const seen: Digest[][] = [];
  await expect
    .poll(
      async () => {
        const now = await digests();
        seen.push(now);
        return now.length > 0 && now.every((d) => d.conf === 'max_split_size_mb:64');
      },
      { timeout: 60_000, interval: 20 },
    )
    .toBe(true);
  await ready();
  seen.push(await digests());
  expect(Math.max(...seen.map((d) => d.length))).toBeLessThanOrEqual(2);
  const lastOld = seen.findLastIndex((d) => d.some((x) => x.conf === 'max_split_size_mb:32'));
  const firstNew = seen.findIndex((d) => d.some((x) => x.conf === 'max_split_size_mb:64'));
  expect(firstNew).toBeGreaterThanOrEqual(0);
  // An old digest seen after a new one had started would be one left running.
  expect(lastOld).toBeLessThan(firstNew);
  const want = cli('../random-s3__default.pickle.gz', '--conf', 'max_split_size_mb:64');
  const rows = session.page.getByRole('table', { name: 'Ranks of one job' }).locator('tbody tr');
  for (let r = 0; r < RANKS; r++) expect((await rows.nth(r).locator('td.what-if').textContent())!.startsWith(`${formatSize(want['reserved_bytes.all.peak']!)} `)).toBe(true);
  await session.page.locator('.recordings-head').getByRole('button', { name: 'close' }).click();
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
