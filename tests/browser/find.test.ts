// Find and step through: the search box (an address, a size range, frame text) against the same
// questions asked of the snapshot here in Node, and the event list scrolled to the last of a
// 900k-entry trace, where a click moves the cursor to that entry's request.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import type { Block } from '../../src/allocator/block';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { decodeSnapshotFile, decodeSnapshotForReplay } from '../../src/trace/snapshot/snapshot-file';
import { requestOfEntries } from '../../src/trace/measures/event-rows';
import { requestTimes, timelineAnnotations } from '../../src/trace/measures/timeline-annotations';
import { RequestKind } from '../../src/trace/stream/request-stream';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();
const ready = () => session.page.evaluate<void>('window.splitscope.ready()');
const cursor = () => session.page.evaluate<{ index: number; total: number }>('window.splitscope.cursor()');
type Found = { requests: number[] | null; blocks: { addr: number; size: number; state: number }[] };
const found = () => session.page.evaluate<Found>('window.splitscope.search()');

async function open(path: string): Promise<void> {
  const name = path.split('/').pop()!;
  await session.page.setInputFiles('input[type=file]', { name, mimeType: 'application/gzip', buffer: readFileSync(path) });
  await session.page.waitForFunction(`document.querySelector('.source-line')?.textContent.includes(${JSON.stringify(name)})`, undefined, { timeout: 60_000 });
  await ready();
}

async function find(text: string, shift = false): Promise<void> {
  const box = session.page.getByRole('searchbox');
  await box.fill(text);
  await box.press(shift ? 'Shift+Enter' : 'Enter');
  await ready();
}

const N12 = 'tests/fixtures/train_gpt2-n12__default.pickle.gz';

/** The first block, segment by segment, that `pick` takes in a replay's final state (null: none). */
function firstBlock(result: ReturnType<typeof replaySnapshot>['result'], pick: (b: Block) => boolean): Block | null {
  for (const s of result.allocator.segments.values()) for (let b: Block | null = s.head; b; b = b.next) if (pick(b)) return b;
  return null;
}

test('an address inside a block finds that block: the cursor steps to the first request that touches it', async () => {
  await open(N12);
  const snapshot = decodeSnapshotFile(readFileSync(N12));
  const { result, stream } = replaySnapshot(snapshot);
  // A block the trace allocated, live at the end, and an address in its middle.
  const traced = new Set<number>();
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) traced.add(stream.id[i]!);
  const target = firstBlock(result, (b) => b.allocated && b.size > 4096 && traced.has(b.tag));
  const address = target!.addr + Math.floor(target!.size / 2) + 7;
  // Here: the recorded entries whose range holds it, as requests (a segment event: the request it comes before).
  const entries = snapshot.device_traces[0]!;
  const requestOfEntry = new Map<number, number>();
  for (let i = 0; i < stream.length; i++) requestOfEntry.set(stream.source[i]!, i);
  const want = new Set<number>();
  let next = 0;
  entries.forEach((e, k) => {
    while (next < stream.length && stream.source[next]! < k) next++;
    if (e.action !== 'oom' && address >= e.addr && address < e.addr + Math.max(1, e.size)) want.add(requestOfEntry.get(k) ?? next);
  });
  await session.page.evaluate('window.splitscope.seek(0)');
  await ready();
  await find(`0x${address.toString(16)}`);
  const got = await found();
  expect(got.requests).toEqual([...want].sort((a, b) => a - b));
  expect(got.requests!.length).toBeGreaterThan(1);
  const first = got.requests![0]!;
  expect((await cursor()).index).toBe(first === 0 ? got.requests![1] : first);
  // At the cursor, the one block that holds the address, as the model has it there.
  const at = (await cursor()).index;
  const { result: there } = replaySnapshot(snapshot, { until: at });
  let holder: Block | null = null;
  for (const s of there.allocator.segments.values()) for (let b: Block | null = s.head; b; b = b.next) if (address >= b.addr && address < b.addr + b.size) holder = b;
  expect(got.blocks).toEqual([{ addr: holder!.addr, size: holder!.size, state: expect.any(Number) }]);
  expect(await session.page.locator('.segment-map canvas').getAttribute('data-marked')).toBe('1');
  expect(await session.page.locator('.search-result').textContent()).toMatch(/1 block here/);
  // Enter again steps on; Shift+Enter back.
  await session.page.getByRole('searchbox').press('Enter');
  await ready();
  expect((await cursor()).index).not.toBe(at);
  await session.page.getByRole('searchbox').press('Shift+Enter');
  await ready();
  expect((await cursor()).index).toBe(at);
  await session.page.locator('.views').screenshot({ path: `${shots}/search-address.png` });
});

test('a size range and frame text match the allocs Node finds, and mark them on the timeline', async () => {
  const snapshot = decodeSnapshotFile(readFileSync(N12));
  const { stream } = replaySnapshot(snapshot);
  const entries = snapshot.device_traces[0]!;
  const allocs = (pick: (i: number) => boolean): number[] => {
    const out: number[] = [];
    for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc && pick(i)) out.push(i);
    return out;
  };
  await find('>1GiB');
  expect((await found()).requests).toEqual(allocs((i) => stream.size[i]! > 2 ** 30));
  await find('64MB..100MB');
  expect((await found()).requests).toEqual(allocs((i) => stream.size[i]! >= 64 * 2 ** 20 && stream.size[i]! <= 100 * 2 ** 20));
  await find('Cross_Entropy');
  const text = allocs((i) => (entries[stream.source[i]!]?.frames ?? []).some((f) => `${f.name} ${f.filename}:${f.line}`.toLowerCase().includes('cross_entropy')));
  expect(text.length).toBeGreaterThan(0);
  expect((await found()).requests).toEqual(text);
  expect(Number(await session.page.locator('.tl-marks').getAttribute('data-count'))).toBeGreaterThan(0);
  // Escape clears the search and the marks.
  await session.page.getByRole('searchbox').press('Escape');
  await ready();
  expect((await found()).requests).toBeNull();
  expect(await session.page.locator('.segment-map canvas').getAttribute('data-marked')).toBeNull();
});

test('a size search matches the size asked for on the map as in the list, and says so', async () => {
  await open(N12);
  const snapshot = decodeSnapshotFile(readFileSync(N12));
  const { result, stream } = replaySnapshot(snapshot);
  const askedSizes = new Set<number>();
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) askedSizes.add(stream.size[i]!);
  // A block at the end larger than its request (rounded up, or keeping the rest of its segment), of a
  // size no request asked for: the search ticks no request, so the cursor stays at the end.
  const target = firstBlock(result, (b) => b.allocated && !askedSizes.has(b.size));
  expect(target).not.toBeNull();
  await session.page.evaluate(`window.splitscope.seek(${stream.length - 1})`);
  await ready();
  await find(`${target!.size}B`);
  const got = await found();
  expect(got.requests).toEqual([]);
  expect(await session.page.locator('.search-result').textContent()).toContain("the size asked, not the block's");
  // No block is marked for its block size alone (before, this one was, beside no request).
  expect(got.blocks).toEqual([]);
  expect(Number((await session.page.locator('.segment-map canvas').getAttribute('data-marked')) ?? 0)).toBe(0);
});

test('the event list scrolls to the last of 900k entries, and a click there moves the cursor to its request', async () => {
  const file = 'tests/fixtures/random-s3__default.pickle.gz';
  await open(file);
  await session.page.getByText(/^Recorded events/).click();
  await ready();
  const list = session.page.locator('.events-scroll');
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  const last = session.page.locator('.events-row[aria-rowindex="900142"]');
  await expect.poll(() => last.locator('[role=cell]').nth(1).textContent(), { timeout: 10_000 }).not.toBe('…');
  await session.page.evaluate('window.splitscope.seek(0)');
  await ready();
  await list.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await last.click();
  await ready();
  // Node: the last entry's request (the last request made from it or before it).
  const snapshot = decodeSnapshotFile(readFileSync(file));
  const { stream } = replaySnapshot(snapshot, { statsOnly: true });
  let want = -1;
  for (let i = 0; i < stream.length; i++) if (stream.source[i]! <= 900141) want = i;
  expect((await cursor()).index).toBe(want);
  expect(await session.page.locator('.events-row.current').getAttribute('aria-rowindex')).toBe(String(stream.source[want]! + 1));
  await session.page.locator('.events').screenshot({ path: `${shots}/event-list-end.png` });
});

test("the timeline marks the program's phases and runs over time_us as well as over requests", async () => {
  const file = 'tests/fixtures/job/annotated.pickle.gz';
  await open(file);
  const { snapshot, traces } = decodeSnapshotForReplay(readFileSync(file), { details: true });
  const trace = traces[0]!;
  const { stream } = replaySnapshot(snapshot, { trace });
  const times = requestTimes(stream, trace.details)!;
  const want = timelineAnnotations(stream, trace.details, snapshot.external_annotations, 0, times, () => requestOfEntries(stream, trace.length));
  await expect.poll(() => session.page.locator('.tl-annotation').count()).toBe(want.length);
  expect(await session.page.locator('.tl-legend').textContent()).toContain(`phases ×${want.length}`);
  expect(await session.page.locator('.tl-annotation-metadata title').first().textContent()).toMatch(/^step 0 forward: requests /);
  // Over time: the x axis in seconds or ms, and a click lands on the request at that time.
  await session.page.getByLabel('over time (time_us)').check();
  await ready();
  expect(await session.page.locator('.tl-x .tick text').last().textContent()).toMatch(/ m?s$/);
  const plot = session.page.locator('.tl-plot');
  const box = (await plot.boundingBox())!;
  const left = 72;
  const right = 14;
  const frac = 0.5;
  await plot.click({ position: { x: left + (box.width - left - right) * frac, y: box.height / 2 } });
  await ready();
  const target = times[0]! + frac * (times[times.length - 1]! - times[0]!);
  let expected = 0;
  while (expected + 1 < times.length && times[expected + 1]! <= target) expected++;
  const got = (await cursor()).index;
  // Within a pixel's worth of time of the request Node finds.
  const perPixel = (times[times.length - 1]! - times[0]!) / (box.width - left - right);
  expect(Math.abs(times[got]! - times[expected]!)).toBeLessThanOrEqual(perPixel);
  await session.page.locator('.timeline').screenshot({ path: `${shots}/timeline-over-time.png` });
  await session.page.getByLabel('over time (time_us)').uncheck();
});
