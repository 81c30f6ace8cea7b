// The comparison in real Chromium: the GPT-2 sample under the defaults, max_split_size_mb:128 and
// expandable_segments:True side by side, each config's figures equal to `splitscope replay --conf`,
// one cursor for all, and a share link that reopens the comparison.
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const SAMPLE = 'public/samples/train_gpt2-n12.pickle.gz';
const CONFS = ['', 'max_split_size_mb:128', 'expandable_segments:True'];

type Stats = Record<string, number>;
type Compared = { conf: string; stats: Stats; atCursor: Stats }[] | null;
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const compared = () => session.page.evaluate<Compared>('window.splitscope.compare()');

function cli(args: string[]): { stats: Stats } {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

test('three configs side by side give the CLI figures', async () => {
  const page = session.page;
  await page.getByLabel('source', { exact: true }).selectOption({ label: 'GPT-2 training steps (train_gpt2-n12, recorded on an H200)' });
  await page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`);
  await ready();
  await page.getByRole('button', { name: 'Compare configs…' }).click();
  // It opens on the current config (the recording's defaults) and the two usual cures.
  for (let i = 0; i < CONFS.length; i++) {
    await expect.poll(() => page.getByLabel(`Config ${i + 1} to compare (PYTORCH_CUDA_ALLOC_CONF)`).inputValue()).toBe(CONFS[i]);
  }
  await ready();
  const runs = (await compared())!;
  expect(runs.map((r) => r.conf)).toEqual(CONFS);
  const table = page.getByRole('table', { name: 'Figures compared' });
  for (const [i, conf] of CONFS.entries()) {
    const want = cli(['replay', SAMPLE, ...(conf ? ['--conf', conf] : [])]).stats;
    expect(runs[i]!.stats).toEqual(want);
    // The cursor rests on the last request: the state there is the state at the end.
    expect(runs[i]!.atCursor).toEqual(want);
    const row = table.locator('tbody tr').nth(i);
    for (const key of ['reserved_bytes.all.peak', 'num_ooms', 'num_alloc_retries', 'num_device_alloc', 'num_device_free']) {
      expect([conf, key, Number(await row.locator(`td[data-stat="${key}"]`).getAttribute('data-value'))]).toEqual([conf, key, want[key]]);
    }
  }
  // expandable_segments maps pages instead of cudaMalloc'ing segments: only the 21 segments made before
  // the trace began remain (of 226 under the defaults).
  expect(runs[2]!.stats['segment.all.current']).toBe(21);
  expect(runs[0]!.stats['segment.all.current']).toBe(226);
  await expect.poll(() => page.locator('.compare-sentence').textContent()).toMatch(/peak reserved/);
  await expect.poll(() => page.locator('.compare-pane canvas.segment-map-canvas').count()).toBe(3);
  await page.screenshot({ path: `${shots}/compare.png`, fullPage: true });
});

test('one cursor moves every config, and each state there equals the CLI stopped at it', async () => {
  const page = session.page;
  await page.getByRole('slider', { name: 'Cursor (request)' }).first().focus();
  await page.keyboard.press('Home');
  await ready();
  const cursor = await page.evaluate<{ index: number }>('window.splitscope.cursor()');
  expect(cursor.index).toBe(0);
  const runs = (await compared())!;
  for (const [i, conf] of CONFS.entries()) {
    const want = cli(['replay', SAMPLE, ...(conf ? ['--conf', conf] : []), '--until', '0']).stats;
    expect([conf, runs[i]!.atCursor['reserved_bytes.all.current']]).toEqual([conf, want['reserved_bytes.all.current']]);
    expect([conf, runs[i]!.atCursor['allocated_bytes.all.current']]).toEqual([conf, want['allocated_bytes.all.current']]);
  }
  await page.keyboard.press('End');
  await ready();
});

test('the share link carries the comparison', async () => {
  const link = await session.page.evaluate<string>('window.splitscope.link()');
  const other = await session.page.context().browser()!.newPage({ viewport: { width: 1280, height: 720 } });
  try {
    await other.goto(link);
    await other.waitForFunction(`'splitscope' in window`);
    await other.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('GPT-2')`, undefined, { timeout: 60_000 });
    await other.evaluate('window.splitscope.ready()');
    await expect.poll(() => other.evaluate<Compared>('window.splitscope.compare()').then((r) => r?.map((x) => x.conf) ?? null), { timeout: 60_000 }).toEqual(CONFS);
    const theirs = (await other.evaluate<Compared>('window.splitscope.compare()'))!;
    expect(theirs.map((r) => r.stats)).toEqual((await compared())!.map((r) => r.stats));
  } finally {
    await other.close();
  }
});

test('a config that does not parse is named and the comparison stays', async () => {
  const page = session.page;
  const field = page.getByLabel('Config 2 to compare (PYTORCH_CUDA_ALLOC_CONF)');
  await field.fill('max_split_size_mb:5');
  await field.press('Enter');
  await expect.poll(() => page.locator('.compare [role="alert"]').textContent()).toMatch(/Config 2: .*max_split_size_mb/);
  expect((await compared())!.map((r) => r.conf)).toEqual(CONFS);
  expect(session.errors).toEqual([]);
});
