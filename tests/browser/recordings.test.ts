// Recordings beside the open one: two snapshots compared show their peaks as the CLI reports them, and a
// three-file rank set shows three rows equal to the CLI's replays (the what-if too); a row opens its rank.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { formatSize } from '../../src/allocator/format-size';
import { openPage, SHOTS as shots } from './open-page';

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
    expect(await rows.nth(r).locator('td.what-if').textContent()).toMatch(new RegExp(`^${formatSize(want['reserved_bytes.all.peak']!).replace('.', '\\.')} [+−=]`));
  }
  await session.page.locator('.recordings').screenshot({ path: `${shots}/recordings-ranks.png` });
  await rows.nth(2).click();
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('rank_2.pickle.gz')`);
  await ready();
  await field.fill('');
  await field.press('Enter');
  await ready();
});
