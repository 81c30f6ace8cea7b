// A fleet's results in the page: splitscope batch's results.jsonl chosen with some of its snapshots
// opens as a table with batch-summary's lines above it, sortable and filterable; a row whose snapshot
// was chosen along opens it under the row's config, with the figures `splitscope replay --conf` gives;
// at 1280 px the table fits its panel, long paths, configs and errors cut short with the whole in a title.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const FILES = ['tests/fixtures/real/vit_oom__default.pickle.gz', 'tests/fixtures/real/oom__default.pickle.gz', 'tests/fixtures/job/rank_1.pickle.gz'];
const CONFS = ['expandable_segments:True', 'max_split_size_mb:128'];
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const cli = (...args: string[]) => execFileSync(process.execPath, ['bin/splitscope.mjs', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('results and snapshots in, a table out; a row opens its snapshot under its config', async () => {
  const page = session.page;
  const out = join(mkdtempSync(join(tmpdir(), 'splitscope-fleet-')), 'results.jsonl');
  cli('batch', ...FILES, ...CONFS.flatMap((c) => ['--conf', c]), '--out', out, '--workers', '1');
  await ready();
  await page.getByLabel('Fleet results…').setInputFiles([
    { name: 'results.jsonl', mimeType: 'application/jsonl', buffer: readFileSync(out) },
    { name: 'vit_oom__default.pickle.gz', mimeType: 'application/gzip', buffer: readFileSync(FILES[0]!) },
  ]);
  const table = page.getByRole('region', { name: 'Fleet results' });
  await table.waitFor();
  expect(await table.locator('.batch-summary').textContent()).toBe(cli('batch-summary', out).trimEnd());
  expect(await table.locator('tbody tr').count()).toBe(6);
  // Filtered by outcome and by text.
  await table.getByLabel('Which rows').selectOption('oom');
  const oomRows = await table.locator('tbody tr').count();
  const want = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.ok && r.first_oom_request !== null).length;
  expect(oomRows).toBe(want);
  await table.getByLabel('Which rows').selectOption('all');
  await table.getByLabel('Filter the rows').fill('rank_1');
  expect(await table.locator('tbody tr').count()).toBe(2);
  await table.getByLabel('Filter the rows').fill('');
  // Sorted by peak reserved, largest first.
  await table.getByRole('button', { name: 'peak reserved' }).click();
  const peaks = await table.locator('tbody tr td:nth-child(4)').allTextContents();
  expect(peaks.length).toBe(6);
  await page.locator('.batch-results').screenshot({ path: `${shots}/fleet-results.png` });
  // The ViT's row under expandable_segments opens its snapshot under that config.
  const row = table.locator(`tbody tr[data-file="vit_oom__default.pickle.gz"][data-conf="${CONFS[0]}"]`);
  expect(await table.locator('tbody tr[data-file="oom__default.pickle.gz"] .hint').first().textContent()).toBe('not chosen');
  await row.getByRole('button', { name: 'open' }).click();
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === 'vit_oom__default.pickle.gz'`, undefined, { timeout: 60_000 });
  await expect.poll(() => page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true }).inputValue()).toBe(CONFS[0]);
  await ready();
  await page.evaluate('window.splitscope.seek(1e9)');
  await ready();
  const stats = await page.evaluate<Record<string, number>>('window.splitscope.stats()');
  expect(stats['reserved_bytes.all.peak']).toBe(JSON.parse(cli('replay', FILES[0]!, '--conf', CONFS[0]!, '--json')).stats['reserved_bytes.all.peak']);
});

test('"open" on an OOM row lands at the OOM the row names, under its config, the OOM box in view', async () => {
  const page = session.page;
  // Under max_split_size_mb:128 the ViT's run fails thousands of requests before its recording's own OOM
  // (15,986 against 20,141); the other's at its recording's own, one request before the end, where
  // the cursor used to land.
  const files = ['tests/fixtures/real/vit_oom__expandable_segments=True.pickle.gz', 'tests/fixtures/real/oom__default.pickle.gz'];
  const out = join(mkdtempSync(join(tmpdir(), 'splitscope-fleet-')), 'results.jsonl');
  cli('batch', ...files, '--conf', CONFS[1]!, '--out', out, '--workers', '1');
  await ready();
  const rows = readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  await page.getByLabel('Fleet results…').setInputFiles([
    { name: 'results.jsonl', mimeType: 'application/jsonl', buffer: readFileSync(out) },
    ...files.map((f) => ({ name: f.split('/').pop()!, mimeType: 'application/gzip', buffer: readFileSync(f) })),
  ]);
  const table = page.getByRole('region', { name: 'Fleet results' });
  const box = page.getByRole('note', { name: 'Why this request failed' });
  for (const name of files.map((f) => f.split('/').pop()!)) {
    const r = rows.find((row) => (row.file as string).endsWith(`/${name}`));
    expect(r.first_oom_request).not.toBeNull();
    if (name.startsWith('vit')) expect(r.first_oom_request).not.toBe(r.recorded_oom_request);
    await table.locator(`tbody tr[data-file="${name}"][data-conf="${CONFS[1]}"]`).getByRole('button', { name: 'open' }).click();
    await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(name)}`, undefined, { timeout: 60_000 });
    await ready();
    expect(await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF', { exact: true }).inputValue()).toBe(CONFS[1]);
    await expect.poll(() => box.getAttribute('data-request')).toBe(String(r.first_oom_request));
    expect(await box.isVisible()).toBe(true);
    expect(await page.evaluate<number>('window.splitscope.cursor().index')).toBe(r.first_oom_request);
  }
  expect(session.errors).toEqual([]);
});

test('a results file that is not one is named, line and all', async () => {
  const page = session.page;
  await page.getByLabel('Fleet results…').setInputFiles([{ name: 'bad.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from('{"file":"a","ok":true}\nnope\n') }]);
  await page.getByText('bad.jsonl, line 2: not a row of splitscope batch (not JSON)').waitFor();
});

test('at 1280 px the table stays inside its panel: long text is cut short, whole in its title', async () => {
  const page = session.page;
  await page.setViewportSize({ width: 1280, height: 800 });
  const dir = '/mnt/fleet/2025-03-14/llama-70b-sft/global_step_12000/ranks';
  const error = `UnpicklingError: ${dir}/rank_17.pickle.gz is not a snapshot: ${'the stream ended inside a frame of the trace entries, '.repeat(6)}(truncated download?)`;
  const conf = 'expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,1024:4,>:8],garbage_collection_threshold:0.8';
  const ok = {
    file: `${dir}/rank_3_with_a_rather_long_name_from_the_job_scheduler_0123456789abcdef.pickle.gz`,
    conf,
    ok: true,
    requests: 25_720,
    recorded_conf: '',
    recorded_oom_request: 25_719,
    'reserved_bytes.all.peak': 79 * 2 ** 30,
    'allocated_bytes.all.peak': 71 * 2 ** 30,
    num_ooms: 1,
    first_oom_request: 25_719,
    outcome: 'OOM at request 25,719 of 25,720, where the recording ends; as recorded it ran out there too',
    reserved_minus_allocated_at_oom: 6 * 2 ** 30,
    reserved_at_oom: 79 * 2 ** 30,
    categories_at_peak: { parameter: 1, gradient: 2, optimizer_state: 3, activation: 9, temporary: 1, input: 0, other: 0 },
  };
  const rows = [ok, { file: `${dir}/rank_17.pickle.gz`, conf, ok: false, error }, { file: `${dir}/rank_17.pickle.gz`, conf: null, ok: false, error }];
  await page.getByLabel('Fleet results…').setInputFiles([{ name: 'long.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n')) }]);
  const panel = page.getByRole('region', { name: 'Fleet results' });
  await panel.locator('tbody tr.error').first().waitFor();
  const widths = await panel.evaluate((el) => ({ table: el.querySelector('table')!.scrollWidth, panel: el.clientWidth, page: document.documentElement.scrollWidth, summary: el.querySelector('.batch-summary')!.scrollWidth }));
  await page.locator('.batch-results').screenshot({ path: `${shots}/fleet-results-1280.png` });
  expect(widths.table).toBeLessThanOrEqual(widths.panel);
  expect(widths.summary).toBeLessThanOrEqual(widths.panel);
  expect(widths.page).toBeLessThanOrEqual(1280);
  // The error is cut short with an ellipsis, and its title holds the whole of it.
  const cell = panel.locator('tbody tr.error td').nth(2);
  expect(await cell.getAttribute('title')).toBe(`error: ${error}`);
  expect(await cell.evaluate((td) => [td.scrollWidth > td.clientWidth, getComputedStyle(td).textOverflow])).toEqual([true, 'ellipsis']);
  expect(await panel.locator('tbody tr.error td').nth(1).getAttribute('title')).toBe(conf);
});
