// A run with no OOM shows what `splitscope explain` knows of it (issue 46): the peak, and a suspected leak
// (a training run that keeps 4 MiB more each step), which can be marked: its bytes on the timeline and
// its blocks on the map, through the stack selection.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { openPage, SHOTS } from './open-page';

const session = openPage();
const FILE = 'tests/fixtures/real/leak__default.pickle.gz';
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');

test('a leak without an OOM: named as explain names it, and marked on the map and timeline', async () => {
  const page = session.page;
  const name = 'leak__default.pickle.gz';
  await page.setInputFiles('header input[type=file]', { name, mimeType: 'application/gzip', buffer: readFileSync(FILE) });
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(name)}`, undefined, { timeout: 60_000 });
  await ready();
  const cli = JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'explain', FILE, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  expect(cli.moment.kind).toBe('peak');
  expect(cli.leaks.length).toBeGreaterThan(0);
  const story = page.getByRole('region', { name: 'The story of the peak' });
  await expect.poll(() => story.getAttribute('aria-busy'), { timeout: 60_000 }).toBe('false');
  expect(await page.getByRole('note', { name: 'Why this request failed' }).count()).toBe(0);
  const text = (await story.textContent())!;
  expect(text).toContain(`At its peak (after request ${cli.moment.request.toLocaleString('en-US')})`);
  const leak = cli.leaks[0];
  expect(text).toContain(`Suspected leak: +4.00 MiB a step from ${leak.site}`);
  // Marked: the selection is the leak's site, with bytes at the cursor, the map's blocks among them.
  await page.evaluate('window.splitscope.seek(1e9)');
  await ready();
  await story.locator(`.peak-leak[data-site="${leak.site}"]`).getByRole('button', { name: 'mark its blocks' }).click();
  await ready();
  await expect.poll(() => page.evaluate<number | null>('window.splitscope.stacks().selectionBytes')).toBeGreaterThan(0);
  expect(await story.locator('.peak-leak').first().getByRole('button').getAttribute('aria-pressed')).toBe('true');
  await page.screenshot({ path: `${SHOTS}/peak-story-leak.png` });
  // The fixes, each replayed: as many as explain lists.
  expect(await story.locator('.peak-fixes li').count()).toBe(cli.fixes.length);
  await story.getByRole('button', { name: 'unmark' }).click();
  await expect.poll(() => page.evaluate<number | null>('window.splitscope.stacks().selectionBytes')).toBeNull();
  expect(session.errors).toEqual([]);
});
