// A change under which the run runs out of memory shows where: the cursor at the new first OOM and the
// OOM box in view, as a file that ends at its OOM opens (issue 46). A change that leaves the run as it
// was, or under which it no longer fails, leaves the cursor where the user put it.
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { openPage } from './open-page';

const session = openPage();
const SAMPLE = 'public/samples/train_gpt2-n12.pickle.gz';
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const firstOom = (capacity: string, conf = ''): number | null =>
  JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'replay', SAMPLE, '--capacity', capacity, ...(conf ? ['--conf', conf] : []), '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 })).ooms[0]?.request ?? null;

test('a cap under which the run fails: the cursor goes to its first OOM, the OOM box in view', async () => {
  const page = session.page;
  await page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready();
  // The user looks at an early moment.
  await page.evaluate('window.splitscope.seek(100)');
  await ready();
  await page.getByLabel('Memory cap (capacity)').selectOption('custom');
  await page.getByLabel('Custom capacity').fill('2GiB');
  await page.getByLabel('Custom capacity').press('Enter');
  await ready();
  const at = firstOom('2GiB');
  expect(at).not.toBeNull();
  const box = page.getByRole('note', { name: 'Why this request failed' });
  await expect.poll(() => box.getAttribute('data-request')).toBe(String(at));
  expect(await box.isVisible()).toBe(true);
  expect(await page.evaluate<number>('window.splitscope.cursor().index')).toBe(at);

  // A config under which it fails elsewhere: there.
  const field = page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('expandable_segments:True');
  await field.press('Enter');
  await ready();
  const there = firstOom('2GiB', 'expandable_segments:True');
  expect(there).not.toBeNull();
  expect(there).not.toBe(at);
  await expect.poll(() => box.getAttribute('data-request')).toBe(String(there));

  // A cap it fits under: the cursor stays where it was.
  await page.evaluate('window.splitscope.seek(200)');
  await ready();
  await page.getByLabel('Custom capacity').fill('40GiB');
  await page.getByLabel('Custom capacity').press('Enter');
  await ready();
  expect(await page.evaluate<number>('window.splitscope.cursor().index')).toBe(200);
  expect(await box.count()).toBe(0);
  expect(session.errors).toEqual([]);
});
