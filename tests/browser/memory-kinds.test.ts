// What the memory is, in real Chromium, against `splitscope explain`: an OOM dump opens with its OOM
// box listing the fixes explain lists (each replayed, in the same order, with the same outcome), the
// stats panel's categories at the OOM equal explain's, the timeline is stacked by category with each
// category's bytes at the cursor in its legend, and the map marks one category's blocks.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const FILE = 'vit_oom__default.pickle.gz';
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const formatSize = (b: number): string => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (b >= 1024 && u < units.length - 1) (b /= 1024), u++;
  return `${b.toFixed(2)} ${units[u]}`;
};

interface Explained {
  moment: { request: number };
  categories: { at_moment: Record<string, number> };
  fixes: { kind: string; change: string; outcome: string; result: { first_oom_request: number | null } }[];
}

test('an OOM dump: the fixes explain lists, the categories at the OOM, the timeline by category, the map filter', async () => {
  const page = session.page;
  const explained = JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', 'explain', `tests/fixtures/real/${FILE}`, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Explained;
  await page.setInputFiles('header input[type=file]', { name: FILE, mimeType: 'application/gzip', buffer: readFileSync(`tests/fixtures/real/${FILE}`) });
  await page.waitForFunction(`document.querySelector('.source-line strong')?.textContent === ${JSON.stringify(FILE)}`, undefined, { timeout: 60_000 });
  await ready();
  // The OOM box's list (folded under the request and PyTorch's message): explain's fixes, in its order, with its outcomes.
  await page.locator('.oom-explained summary').click({ timeout: 60_000 });
  const fixes = page.locator('.oom-fixes li');
  await fixes.first().waitFor({ timeout: 60_000 });
  expect(await fixes.count()).toBe(explained.fixes.length);
  for (let k = 0; k < explained.fixes.length; k++) {
    const f = explained.fixes[k]!;
    const li = fixes.nth(k);
    expect(await li.getAttribute('data-kind')).toBe(f.kind);
    expect(await li.textContent()).toContain(f.outcome);
    if (f.kind === 'setting') expect(await li.textContent()).toContain(f.change.replace('PYTORCH_CUDA_ALLOC_CONF=', ''));
  }
  expect(await page.locator('.oom-explained summary').textContent()).toMatch(/^What the memory was \(8\d% activations, 1\d% optimizer state.*\), and \d+ fixes checked by replay$/);
  await page.locator('.oom-box').screenshot({ path: `${shots}/oom-explained.png` });

  // The stats panel at the OOM: explain's categories (what was live when the request failed).
  const keys = ['parameter', 'gradient', 'optimizer_state', 'activation', 'temporary', 'input', 'other'];
  const rows = await page.locator('.memory-kinds-stats tr[data-category]').evaluateAll((trs) =>
    trs.map((tr) => [Number((tr as HTMLElement).dataset.category), Number((tr.querySelector('td[data-bytes]') as HTMLElement).dataset.bytes)]),
  );
  const want = keys.map((k, c) => [c, explained.categories.at_moment[k]!]).filter(([, b]) => b! > 0);
  expect(rows).toEqual(want);

  // The timeline stacked by category: a path per category with bytes, and each one's bytes at the cursor.
  const painted = await page.locator('.timeline path.tl-layer').evaluateAll((ps) => ps.filter((p) => (p.getAttribute('d') ?? '') !== '').length);
  expect(painted).toBe(7);
  const legend = await page.locator('.tl-layer-key').allTextContents();
  expect(legend).toContain(`activations ${formatSize(explained.categories.at_moment['activation']!)}`);
  await page.locator('.timeline').screenshot({ path: `${shots}/timeline-categories.png` });
  await page.getByLabel('timeline by what the memory is').uncheck();
  await page.waitForFunction(`[...document.querySelectorAll('.timeline path.tl-layer')].every((p) => !p.getAttribute('d'))`);
  expect(await page.locator('.tl-layer-key').count()).toBe(0);

  // The map marks the blocks of one category: activations at the OOM, and no gradient (zero_grad freed them).
  await page.getByLabel('mark on the map').selectOption({ label: 'activations' });
  await page.waitForFunction(`Number(document.querySelector('.category-marked')?.textContent.replace(/[^0-9]/g, '')) > 0`);
  await page.getByLabel('mark on the map').selectOption({ label: 'gradients' });
  await page.waitForFunction(`document.querySelector('.category-marked')?.textContent === '0 blocks marked'`);
  await page.getByLabel('mark on the map').selectOption({ label: 'nothing' });

  // The stack view's sites say what each is: Adam's state where it made it, activations in the model's layers.
  await page.locator('details.stacks > summary').click();
  await page.waitForFunction(`document.querySelectorAll('.sites td.site-category[data-category]').length > 0`, undefined, { timeout: 60_000 });
  const sites = await page.locator('.sites tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [(tr.querySelector('td.site') as HTMLElement).dataset.site!, tr.querySelector('td.site-category')!.textContent]),
  );
  expect(sites.find(([site]) => /_init_group .*adam\.py/.test(site!))?.[1]).toBe('optimizer state');
  expect(sites.find(([site]) => /forward .*linear\.py/.test(site!))?.[1]).toBe('activations');
  await page.locator('details.stacks > summary').click();
});
