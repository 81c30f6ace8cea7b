// The first screen tells a visitor what to bring: a folded "Record yours" line in the header opens
// PyTorch's calls that record a snapshot (and dump one at an OOM), each copied with one click, and
// says to drop the file on the page.
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();

const RECORD = `import torch
torch.cuda.memory._record_memory_history(max_entries=100_000)
# ... run your training steps ...
torch.cuda.memory._dump_snapshot("snapshot.pickle")`;
const ON_OOM = `def oom_observer(device, alloc, device_alloc, device_free):
    torch.cuda.memory._dump_snapshot("oom_snapshot.pickle")
torch._C._cuda_attach_out_of_memory_observer(oom_observer)`;

test('the first screen says how to record a snapshot, with the code to copy', async () => {
  const page = session.page;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  const note = page.locator('details', { has: page.locator('summary', { hasText: 'Record yours' }) });
  // Folded, it is one line of the first screen.
  expect(await note.count()).toBe(1);
  const folded = (await note.boundingBox())!;
  expect(folded.y + folded.height).toBeLessThan(720);
  expect(folded.height).toBeLessThan(40);
  await note.locator('summary').click();
  expect(await note.locator('pre code').allTextContents()).toEqual([RECORD, ON_OOM]);
  expect(await note.textContent()).toMatch(/drop the file on this page/i);
  await page.screenshot({ path: `${shots}/record-yours.png` });
  // Each Copy button copies its code.
  const copies = note.getByRole('button', { name: /^Copy/ });
  expect(await copies.count()).toBe(2);
  await copies.nth(0).click();
  await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(RECORD);
  await copies.nth(1).click();
  await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(ON_OOM);
  await note.locator('summary').click();
  expect(await note.getAttribute('open')).toBeNull();
});
