// The page in real Chromium: it opens on the built-in sample, replays it like the CLI does, and a bad
// file gives a clear message while the previous view stays.
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();


type Stats = Record<string, number>;
// Page-side code as strings: vitest rewrites test-file functions with helpers the page lacks.
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const stats = () => session.page.evaluate<Stats>('window.splitscope.stats()');

function cli(args: string[]): { stats: Stats } {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

test('opens on the built-in GPT-2 sample with the same stats as the CLI', async () => {
  await session.page.waitForSelector('td[data-stat="reserved_bytes.all.peak"]');
  await ready();
  const want = cli(['replay', 'public/samples/train_gpt2-n12.pickle.gz']).stats;
  expect(await stats()).toEqual(want);
  await session.page.screenshot({ path: `${shots}/sample.png` });
});

test('a typed config replays the sample like splitscope replay --conf', async () => {
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:128');
  await field.press('Enter');
  await session.page.waitForFunction(`document.body.textContent.includes('max_split_size_mb:128')`);
  await ready();
  const want = cli(['replay', 'public/samples/train_gpt2-n12.pickle.gz', '--conf', 'max_split_size_mb:128']).stats;
  expect(await stats()).toEqual(want);
});

test('a file of random bytes gives an alert and the previous view stays', async () => {
  const before = await stats();
  const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
  await session.page.setInputFiles('input[type=file]', { name: 'random.pickle', mimeType: 'application/octet-stream', buffer: bytes });
  const alert = session.page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/not a PyTorch memory snapshot|pickle/i);
  await ready();
  expect(await stats()).toEqual(before);
  await session.page.screenshot({ path: `${shots}/bad-file.png` });
});

test('no uncaught errors on the page', () => {
  expect(session.errors).toEqual([]);
});
