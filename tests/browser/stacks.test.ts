// Which code holds the memory: the stack view at the peak of a reference trace against a Node
// computation over the same snapshot (its own grouping of the recorded entries), its selection marked
// on the segment map and drawn on the timeline, and the same view under a what-if config.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import type { Block } from '../../src/allocator/block';
import { formatSize } from '../../src/allocator/format-size';
import { isNoiseFrame } from '../../src/trace/measures/frame-filter';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const FILE = 'tests/fixtures/train_gpt2-n12__default.pickle.gz';
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
type Stacks = { at: number | null; bytes: number; sites: { label: string; bytes: number; count: number; largest: number }[]; selected: number | null; selectionBytes: number | null };
const stacks = () => session.page.evaluate<Stacks>('window.splitscope.stacks()');

/** The cursor to the peak of allocated memory: the button, unless the cursor is there already (a
 * config change leaves the cursor where it was, and the peak may be the same request). */
async function goToPeak(): Promise<void> {
  const button = session.page.getByRole('button', { name: /Go to the peak/ });
  if (await button.isEnabled()) await button.click();
  await ready();
}

/** Live blocks at the peak of allocated memory, grouped here by their alloc entries' innermost frame. */
function nodeSites(conf?: string) {
  const snapshot = decodeSnapshotFile(readFileSync(FILE));
  const options = conf ? { conf } : {};
  const full = replaySnapshot(snapshot, options);
  const allocated = full.result.series.allocated;
  let peak = 0;
  for (let i = 1; i < allocated.length; i++) if (allocated[i]! > allocated[peak]!) peak = i;
  const { result, stream } = replaySnapshot(snapshot, { ...options, until: peak });
  const entryOf = new Map<number, number>();
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) entryOf.set(stream.id[i]!, stream.source[i]!);
  // Blocks from before the recording: the final snapshot's stack if they lived to its end.
  const finalFrames = new Map(snapshot.segments.flatMap((seg) => seg.blocks.filter((b) => b.state !== 'inactive').map((b) => [b.address, b.frames ?? []] as const)));
  const initial = new Map(stream.initialBlocks.map((b) => [b.id, b.source === undefined ? (finalFrames.get(b.addr) ?? []) : []]));
  const sites = new Map<string, { bytes: number; count: number; requested: number }>();
  for (const s of result.allocator.segments.values()) {
    for (let b: Block | null = s.head; b; b = b.next) {
      if (!b.allocated || b.pending) continue;
      const before = initial.get(b.tag);
      const frames = (before ?? snapshot.device_traces[0]![entryOf.get(b.tag)!]?.frames ?? []).filter((f) => !isNoiseFrame(f));
      const label = frames[0] ? `${frames[0].name} ${frames[0].filename}:${frames[0].line}` : before ? '(allocated before the recording began)' : '(no stack recorded)';
      const site = sites.get(label) ?? { bytes: 0, count: 0, requested: 0 };
      site.bytes += b.size;
      site.count++;
      site.requested += b.requestedSize;
      sites.set(label, site);
    }
  }
  return { peak, sites: [...sites].sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
}

test('at the peak, the stack view lists the top site and bytes a Node computation over the snapshot finds', async () => {
  await session.page.setInputFiles('input[type=file]', { name: 'train_gpt2-n12__default.pickle.gz', mimeType: 'application/gzip', buffer: readFileSync(FILE) });
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('train_gpt2-n12__default')`);
  await ready();
  await session.page.getByText('Which code holds the memory').click();
  await ready();
  const want = nodeSites();
  await goToPeak();
  const got = await stacks();
  expect(got.at).toBe(want.peak);
  const [topLabel, top] = want.sites[0]!;
  expect(got.sites[0]).toMatchObject({ label: topLabel, bytes: top.bytes, count: top.count });
  expect(got.bytes).toBe(want.sites.reduce((a, [, s]) => a + s.bytes, 0));
  // The table shows it first, with its bytes.
  const first = session.page.locator('.sites tbody tr').first();
  await expect.poll(() => first.locator('td.site').getAttribute('data-site')).toBe(topLabel);
  expect(await first.locator('td.num').first().textContent()).toBe(formatSize(top.bytes));
  expect(await session.page.locator('.icicle [role=treeitem]').count()).toBeGreaterThan(5);

  // Selecting the site marks its blocks on the map and draws its requested bytes on the timeline.
  await first.click();
  await ready();
  const selected = await stacks();
  expect(selected.selected).toBe(top.count);
  expect(selected.selectionBytes).toBe(top.requested);
  await expect.poll(() => session.page.locator('.segment-map canvas').getAttribute('data-marked')).toBe(String(top.count));
  expect(await session.page.locator('.tl-overlay').getAttribute('d')).toMatch(/^M/);
  expect(await session.page.locator('.tl-legend').textContent()).toContain(formatSize(top.requested));
  await session.page.locator('.stacks').screenshot({ path: `${shots}/stacks-at-peak.png` });
  await session.page.locator('.views').screenshot({ path: `${shots}/stacks-marked-map.png` });

  // A frame of the icicle: its subtree's allocations marked; clicking it again goes back up.
  const bar = session.page.locator('.icicle [role=treeitem]').nth(1);
  const label = (await bar.getAttribute('aria-label'))!;
  await bar.hover();
  await expect.poll(() => session.page.locator('.icicle-tip').count()).toBe(1);
  await bar.click();
  await ready();
  expect(await session.page.locator('.icicle [aria-selected=true]').getAttribute('aria-label')).toBe(label);
  // The tip of the bar clicked goes with the click (the view zoomed under the pointer).
  expect(await session.page.locator('.icicle-tip').count()).toBe(0);
  const marked = Number(await session.page.locator('.segment-map canvas').getAttribute('data-marked'));
  expect(marked).toBe((await stacks()).selected);
  expect(marked).toBeGreaterThan(0);
  await session.page.getByRole('button', { name: 'clear' }).click();
  await ready();
  expect(await session.page.locator('.segment-map canvas').getAttribute('data-marked')).toBeNull();
  expect(await session.page.locator('.tl-overlay').getAttribute('d')).toBe('');
});

test('under a what-if config the view shows what holds the memory in that replay', async () => {
  const field = session.page.getByLabel('PYTORCH_CUDA_ALLOC_CONF');
  await field.fill('max_split_size_mb:64');
  await field.press('Enter');
  await ready();
  const want = nodeSites('max_split_size_mb:64');
  await goToPeak();
  const got = await stacks();
  expect(got.at).toBe(want.peak);
  expect(got.sites.map((s) => [s.label, s.bytes])).toEqual(want.sites.map(([l, s]) => [l, s.bytes]));
  expect(await session.page.locator('.stacks-at').textContent()).toContain('in the replay under max_split_size_mb:64');
  await field.fill('');
  await field.press('Enter');
  await ready();
});

test('a link keeps the stack selection and the search: the file it names opens with both', async () => {
  await goToPeak();
  const site = (await stacks()).sites[1]!;
  await session.page.evaluate(`window.splitscope.selectStack(${JSON.stringify({ site: site.label })})`);
  const box = session.page.getByRole('searchbox');
  await box.fill('>64MiB');
  await box.press('Enter');
  await ready();
  const found = await session.page.evaluate<{ requests: number[] | null }>('window.splitscope.search()');
  await new Promise((r) => setTimeout(r, 700)); // the address bar follows within 500 ms
  const link = await session.page.evaluate<string>('window.splitscope.link()');
  const at = (await session.page.evaluate<{ index: number }>('window.splitscope.cursor()')).index;
  const again = await session.page.context().browser()!.newPage({ viewport: { width: 1280, height: 720 } });
  await again.goto(link);
  // The file is too large to travel in the link: the page asks for it, then opens as the link says.
  await again.waitForFunction(`'splitscope' in window`);
  await again.setInputFiles('header input[type=file]', { name: 'train_gpt2-n12__default.pickle.gz', mimeType: 'application/gzip', buffer: readFileSync(FILE) });
  await again.waitForFunction(`document.querySelector('.source-line')?.textContent.includes('train_gpt2-n12__default')`);
  await again.evaluate('window.splitscope.ready()');
  await expect.poll(() => again.evaluate<Stacks>('window.splitscope.stacks()').then((s) => [s.at, s.selected]), { timeout: 30_000 }).toEqual([at, site.count]);
  // Where the link put it, not playing on from there (the built-in workload, opened meanwhile, plays).
  expect((await again.evaluate<{ index: number }>('window.splitscope.cursor()')).index).toBe(at);
  expect((await again.evaluate<{ requests: number[] | null }>('window.splitscope.search()')).requests).toEqual(found.requests);
  expect(await again.getByRole('searchbox').inputValue()).toBe('>64MiB');
  await again.close();
  await box.fill('');
  await box.press('Escape');
  await session.page.getByRole('button', { name: 'clear' }).click();
  await ready();
});

test('on a recording with C++ frames (the recorder\'s default) the sites are the program\'s lines and the ops that asked, as with Python frames alone', async () => {
  const open = async (file: string) => {
    await session.page.setInputFiles('header input[type=file]', { name: file, mimeType: 'application/gzip', buffer: readFileSync(`tests/fixtures/frameworks/${file}`) });
    await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(file.replace('.pickle.gz', ''))})`);
    await ready();
    await goToPeak();
    return (await stacks()).sites;
  };
  const cpp = await open('lightning-8__default.pickle.gz');
  // Not one row of the allocator's own frame holding everything, as memory_viz shows it.
  expect(cpp.length).toBeGreaterThan(5);
  expect(cpp.filter((s) => /CachingAllocator|unwind|gather/.test(s.label))).toEqual([]);
  expect(cpp.some((s) => s.label.includes('.py:'))).toBe(true);
  expect(cpp.some((s) => /^at::/.test(s.label))).toBe(true);
  await expect.poll(() => session.page.locator('.sites tbody tr').count()).toBeGreaterThan(5);
  await session.page.locator('.stacks').screenshot({ path: `${shots}/stacks-cpp-frames.png` });
  // The Python lines hold the same bytes as in the same program recorded with stacks='python'.
  const python = await open('lightning-8__python.pickle.gz');
  const lines = (sites: Stacks['sites']) => new Map(sites.filter((s) => s.label.includes('.py:')).map((s) => [s.label, s.bytes]));
  expect(lines(cpp)).toEqual(lines(python));
});
