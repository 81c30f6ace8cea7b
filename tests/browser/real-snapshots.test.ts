// Real programs' snapshots opened in the page as a user drops them: the OOM dump shows its OOM at its
// request with the cap it inferred, a torch.compile snapshot shows its private pool as a lane, a
// deferred-free (record_stream) trace shows pending frees, and a snapshot without history shows its
// moment with an explanation: each with the CLI's figures, and no error.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const REAL = 'tests/fixtures/real';

type Stats = Record<string, number>;
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const stats = () => session.page.evaluate<Stats>('window.splitscope.stats()');
const cursor = () => session.page.evaluate<{ index: number; total: number }>('window.splitscope.cursor()');

function cli(args: string[]): { stats: Stats; ooms: { request: number }[] } {
  return JSON.parse(execFileSync(process.execPath, ['bin/splitscope.mjs', ...args, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function open(file: string): Promise<void> {
  await session.page.setInputFiles('input[type=file]', { name: file, mimeType: 'application/gzip', buffer: readFileSync(`${REAL}/${file}`) });
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(file)})`, undefined, { timeout: 60_000 });
  await ready();
}

test('the OOM dump, opened with no cap given, shows its OOM at its request and says which cap it inferred', async () => {
  await open('oom__default.pickle.gz');
  const want = cli(['replay', `${REAL}/oom__default.pickle.gz`]);
  expect(want.ooms.map((o) => o.request)).toEqual([10943]);
  expect(await stats()).toEqual(want.stats);
  expect((await stats())['num_ooms']).toBe(1);
  const notes = await session.page.locator('.note').allTextContents();
  expect(notes.join(' ')).toMatch(/inferred from the recorded OOM, the cap was between 9\.59 GiB and 10\.07 GiB/);
  expect(notes.join(' ')).toMatch(/The OOM comes at request 10,943, as recorded/);
  expect(await session.page.getByLabel('Memory cap (capacity)').locator('option:checked').textContent()).toMatch(/As recorded \(10\.00 GiB\)/);
  // It opens at the OOM's request, where the page says what PyTorch said.
  expect((await cursor()).index).toBe(10943);
  await expect.poll(() => session.page.locator('.oom-box .oom-message').textContent()).toMatch(/CUDA out of memory\. Tried to allocate 1\.46 GiB/);
  await session.page.screenshot({ path: `${shots}/oom-dump.png` });
});

test('under max_split_size_mb:128 the OOM dump OOMs where that recording did', async () => {
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:128');
  await field.press('Enter');
  await ready();
  const recorded = cli(['replay', `${REAL}/oom__max_split_size_mb=128.pickle.gz`]);
  expect((await stats())['num_ooms']).toBe(1);
  expect(await stats()).toEqual(cli(['replay', `${REAL}/oom__default.pickle.gz`, '--conf', 'max_split_size_mb:128']).stats);
  expect(recorded.ooms.map((o) => o.request)).toEqual([10943]);
  await field.fill('');
  await field.press('Enter');
  await ready();
});

test('torch.compile with CUDA graphs: its private pool is a lane of its own, and it replays like the CLI', async () => {
  await open('compiled__default.pickle.gz');
  expect(await stats()).toEqual(cli(['replay', `${REAL}/compiled__default.pickle.gz`]).stats);
  await expect.poll(() => session.page.locator('.segment-map').textContent()).toMatch(/private pool \(0, 1\) · large pool/);
  await session.page.screenshot({ path: `${shots}/compiled-pools.png` });
});

test('a side-stream prefetch (record_stream) replays like the CLI, its pending frees at the end', async () => {
  await open('prefetch__default.pickle.gz');
  const want = cli(['replay', `${REAL}/prefetch__default.pickle.gz`]).stats;
  expect(await stats()).toEqual(want);
  // Blocks freed on the compute stream and still used by the copy stream: active, not allocated.
  expect(want['active_bytes.all.current']!).toBeGreaterThan(want['allocated_bytes.all.current']!);
  const pending = await session.page.evaluate<number>('window.splitscope.pendingFrees()');
  expect(pending).toBe(24);
});

test('a snapshot without history shows its moment with an explanation and no error', async () => {
  const before = session.errors.length;
  await open('segments_only.pickle.gz');
  expect(await session.page.locator('.banner[role=alert]').count()).toBe(0);
  expect((await session.page.locator('.note').allTextContents()).join(' ')).toMatch(/no allocation history .*_record_memory_history/);
  expect(await stats()).toEqual(cli(['replay', `${REAL}/segments_only.pickle.gz`]).stats);
  expect((await cursor()).total).toBe(0);
  await expect.poll(() => session.page.locator('.guide').textContent()).toMatch(/no allocation history/);
  const { rows } = await session.page.evaluate<{ rows: unknown[] }>('window.splitscope.sweep()');
  expect(rows).toEqual([]);
  await session.page.screenshot({ path: `${shots}/segments-only.png` });
  expect(session.errors.length).toBe(before);
});

test('no uncaught errors on the page', () => {
  expect(session.errors).toEqual([]);
});
