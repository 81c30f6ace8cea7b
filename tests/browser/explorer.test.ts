// The sweep explorer in real Chromium: roundup_power2_divisions swept on the GPT-2 sample gives the
// rows of `splitscope sweep --param`, and a built-in workload swept over seeds under a memory cap gives
// the chance of an OOM, lower with expandable_segments.
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { parseAllocConf } from '../../src/allocator/config-parser';
import { seedRow } from '../../src/trace/sweep/seed-sweep';
import type { SweepRow } from '../../src/trace/sweep/sweep';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const SAMPLE = 'public/samples/train_gpt2-n12.pickle.gz';
type Explored = { values: number[]; rows: (SweepRow | null)[]; error: string | null };
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');

test('roundup_power2_divisions swept on the sample gives the CLI rows', async () => {
  const page = session.page;
  await page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready();
  await page.getByText('Sweep explorer').click();
  await page.getByLabel('sweep', { exact: true }).selectOption('roundup_power2_divisions');
  await page.getByRole('button', { name: 'Run' }).click();
  const got = await page.evaluate<Explored>(`window.splitscope.explore('roundup_power2_divisions')`);
  expect(got.values).toEqual([0, 2, 4, 8, 16]);
  const want = JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'sweep', SAMPLE, '--param', 'roundup_power2_divisions', '--values', got.values.join(','), '--json'], { encoding: 'utf8' }));
  expect(got.rows).toEqual(want);
  await expect.poll(() => page.locator('.explorer-table tbody tr').count()).toBe(5);
  // A row applies its setting.
  await page.locator('.explorer-table tbody tr').nth(2).getByRole('button').click();
  await ready();
  expect(await page.getByLabel('PYTORCH_CUDA_ALLOC_CONF').inputValue()).toBe('roundup_power2_divisions:4');
});

test('a workload over seeds under a cap: the chance of an OOM, and how expandable_segments changes it', async () => {
  const page = session.page;
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('');
  await field.press('Enter');
  await page.getByLabel('source', { exact: true }).selectOption('transformer');
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('built-in workload')`);
  // Every card the cap offers reads in GiB (the H200's too, not in bytes).
  const cards = await page.getByLabel('Memory cap (capacity)').locator('option').allTextContents();
  expect(cards.filter((c) => /card|H200/.test(c)).map((c) => /GiB\)$/.test(c) && !/bytes/.test(c))).toEqual([true, true, true, true]);
  expect(cards).toContain('H200 (its whole 139.80 GiB)');
  await page.getByLabel('Memory cap (capacity)').selectOption('custom');
  await page.getByLabel('Custom capacity').fill('28GiB');
  await page.getByLabel('Custom capacity').press('Enter');
  await ready();
  const cap = { kind: 'fraction' as const, bytes: 28 * 2 ** 30 };
  const expected = (conf: string) => Array.from({ length: 12 }, (_, i) => seedRow('transformer', {}, i + 1, parseAllocConf(conf).config, cap));
  const plain = await page.evaluate<Explored>(`window.splitscope.explore('seed', { seeds: 12 })`);
  expect(plain.rows).toEqual(expected(''));
  await expect.poll(() => page.locator('.explorer-probability').getAttribute('data-probability')).toBe(String(plain.rows.filter((r) => r!.num_ooms > 0).length / 12));
  const withoutEs = plain.rows.filter((r) => r!.num_ooms > 0).length;
  expect(withoutEs).toBeGreaterThan(0);
  await field.fill('expandable_segments:True');
  await field.press('Enter');
  await ready();
  const es = await page.evaluate<Explored>(`window.splitscope.explore('seed', { seeds: 12 })`);
  expect(es.rows).toEqual(expected('expandable_segments:True'));
  expect(es.rows.filter((r) => r!.num_ooms > 0).length).toBeLessThan(withoutEs);
  await page.locator('.explorer').screenshot({ path: `${shots}/explorer-seeds.png` });
  expect(session.errors).toEqual([]);
});
