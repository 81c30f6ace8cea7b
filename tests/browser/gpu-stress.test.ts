// GPU stress in real Chromium (WebGPU on SwiftShader here): every built-in workload and a real
// snapshot run through the allocator and the arena with verify after every batch and find no
// mismatches; the overlap fault makes verify find them. Every test here fails without an adapter.
import { expect, test } from 'vitest';
import { WORKLOADS } from '../../src/trace/stream/workloads';
import { openPage, SHOTS as shots } from './open-page';

const session = openPage();

interface RunStatus {
  position: number;
  total: number;
  batches: number;
  adapter: string | null;
  gpuOff: string | null;
  arenaBytes: number;
  verifiedBlocks: number;
  mismatches: number;
  wordlessBlocks: number;
  ooms: number;
  deviceLosses: number;
  scale: number;
  planner: string;
}
interface GpuReport {
  adapter: string | null;
  arenaBytes: number;
  verifiedBlocks: number;
  mismatches: number;
}


// Page-side code as strings: vitest rewrites test-file functions with helpers the page lacks.
const stress = (request: object) => session.page.evaluate<RunStatus>(`window.splitscope.stress(${JSON.stringify(request)})`);
const gpu = () => session.page.evaluate<GpuReport>('window.splitscope.gpu()');

/** The page found a WebGPU adapter: without one, say so rather than time out waiting for GPU work. */
async function expectAdapter(): Promise<void> {
  await expect.poll(async () => (await gpu()).adapter, { timeout: 15_000, message: 'GPU stress needs a WebGPU adapter (none was found)' }).not.toBeNull();
}

function expectGpu(run: RunStatus): void {
  // No adapter means no GPU result: fail, never skip.
  expect(run.gpuOff, 'GPU stress must run on a WebGPU adapter').toBeNull();
  expect(run.adapter).not.toBeNull();
  expect(run.arenaBytes).toBeGreaterThan(0);
}

test('the page opens with the built-in workload running on the GPU', async () => {
  await expectAdapter();
  await session.page.waitForFunction(`window.splitscope.gpu().verifiedBlocks > 0`, undefined, { timeout: 60_000 });
  const report = await gpu();
  expect(report.adapter).not.toBeNull();
  expect(report.mismatches).toBe(0);
  await session.page.screenshot({ path: `${shots}/gpu-stress.png` });
});

test.each(WORKLOADS.map((w) => [w.id]))('workload %s: 5,000+ requests verified after every batch, no mismatches', async (id) => {
  const run = await stress({ source: id, batch: 100 });
  expectGpu(run);
  expect(run.total).toBeGreaterThanOrEqual(5000);
  expect(run.position).toBe(run.total);
  expect(run.batches).toBe(Math.ceil(run.total / 100));
  // The allocator steps the next batches in the planner worker while the page submits the last ones.
  expect(run.planner).toBe('a worker');
  expect(run.verifiedBlocks).toBeGreaterThan(run.batches);
  expect(run.ooms).toBe(0);
  expect(run.mismatches).toBe(0);
});

test('a real snapshot (GPT-2 training, recorded on an H200) runs on the arena with no mismatches', async () => {
  await session.page.waitForSelector('td[data-stat="reserved_bytes.all.peak"]');
  const run = await stress({ source: 'snapshot', batch: 500 });
  expectGpu(run);
  expect(run.position).toBe(run.total);
  expect(run.total).toBeGreaterThanOrEqual(5000);
  expect(run.mismatches).toBe(0);
});

test('the overlap fault makes verify find mismatches', async () => {
  const before = await gpu();
  const run = await stress({ source: 'log-uniform', batch: 100, fault: true, params: { events: 2000 } });
  expectGpu(run);
  expect(run.mismatches).toBeGreaterThan(0);
  const after = await gpu();
  expect(after.mismatches - before.mismatches).toBe(run.mismatches);
});

test('at 1:1, blocks of megabytes are spread over many workgroups: clean runs find no mismatch, the fault finds some', async () => {
  // 1-4 MiB blocks on a 64 MiB device mirrored word for word: each block's span is 16 to 64 workgroup shares.
  const request = { source: 'log-uniform', batch: 50, arenaBytes: 64 * 2 ** 20, deviceBytes: 64 * 2 ** 20, params: { minSize: 2 ** 20, maxSize: 4 * 2 ** 20, liveTarget: 10, events: 1500 } };
  const clean = await stress(request);
  expectGpu(clean);
  expect(clean.scale).toBe(1);
  expect(clean.position).toBe(clean.total);
  expect(clean.verifiedBlocks).toBeGreaterThan(clean.batches);
  expect(clean.mismatches).toBe(0);
  const faulty = await stress({ ...request, fault: true });
  expectGpu(faulty);
  expect(faulty.mismatches).toBeGreaterThan(0);
});

test('pause, step and play: batches the planner stepped ahead reach the GPU before the pause, a step is one batch', async () => {
  await expectAdapter();
  const panel = session.page.getByRole('region', { name: 'GPU stress' });
  // "1,280 / 8,000 in 20 batches · ...": requests applied, of all, and batches.
  const requests = async (): Promise<{ position: number; total: number; batches: number }> => {
    const text = await panel.locator('dt:text-is("Requests") + dd').innerText();
    const [, position, total, batches] = /([\d,]+) \/ ([\d,]+) in ([\d,]+)/.exec(text)!.map((s) => Number(s.replaceAll(',', '')));
    return { position: position!, total: total!, batches: batches! };
  };
  const before = (await gpu()).mismatches; // counted since the page opened (the fault tests' included)
  // Another workload than the last test's: choosing it starts it, playing, 64 requests a batch.
  await panel.getByLabel('Workload').selectOption('kv-cache');
  await expect.poll(async () => (await requests()).position, { timeout: 30_000 }).toBeGreaterThan(0);
  await panel.getByRole('button', { name: 'Pause' }).click();
  await session.page.evaluate('window.splitscope.ready()');
  const paused = await requests();
  expect(paused.position).toBeLessThan(paused.total);
  // Every batch the planner applied is counted and went to the GPU: the position is the batches' requests.
  expect(paused.position).toBe(paused.batches * 64);
  expect((await gpu()).mismatches).toBe(before);
  await panel.getByRole('button', { name: 'Step' }).click();
  await session.page.evaluate('window.splitscope.ready()');
  expect(await requests()).toEqual({ ...paused, position: paused.position + 64, batches: paused.batches + 1 });
  await panel.getByRole('button', { name: 'Play' }).click();
  await expect.poll(async () => (await requests()).position, { timeout: 120_000 }).toBe(paused.total);
  await session.page.evaluate('window.splitscope.ready()');
  expect((await gpu()).mismatches).toBe(before);
});

test('a lost device is replaced, the arena rebuilt from the allocator, and the run goes on clean', async () => {
  await expectAdapter();
  const running = stress({ source: 'kv-cache', batch: 100 });
  await session.page.waitForFunction(`window.splitscope.gpu().verifiedBlocks > 0`);
  await session.page.waitForTimeout(300);
  await session.page.evaluate('window.splitscope.loseGpu()');
  const run = await running;
  expectGpu(run);
  expect(run.deviceLosses).toBeGreaterThanOrEqual(1);
  expect(run.position).toBe(run.total);
  expect(run.mismatches).toBe(0);
});

test('the panel sets workload parameters and the arena size; a bad value is refused and the run goes on', async () => {
  await expectAdapter();
  const before = (await gpu()).mismatches;
  const panel = session.page.getByRole('region', { name: 'GPU stress' });
  await panel.getByLabel('Workload').selectOption('log-uniform');
  await session.page.waitForFunction(`document.body.innerText.includes('/ 8,000 in')`);
  const events = panel.getByLabel('Requests', { exact: true });
  await events.fill('6000');
  await events.press('Enter');
  await session.page.waitForFunction(`document.body.innerText.includes('/ 6,000 in')`);
  await events.fill('12.5');
  await events.press('Enter');
  await expect.poll(() => panel.getByRole('alert').textContent()).toMatch(/"events".*integer/);
  expect(await session.page.evaluate(`document.body.innerText.includes('/ 6,000 in')`)).toBe(true);
  await panel.getByLabel('Arena').selectOption({ label: '16.00 MiB' });
  // The switch waits for the batches in flight: on SwiftShader sharing 2 cores with the page's
  // workers, a readback alone can take a second.
  await expect.poll(async () => (await gpu()).arenaBytes, { timeout: 5_000 }).toBe(16 * 2 ** 20);
  await session.page.evaluate('window.splitscope.ready()');
  expect((await gpu()).mismatches - before).toBe(0);
  await session.page.screenshot({ path: `${shots}/gpu-stress-panel.png` });
});

test('no uncaught errors on the page', () => {
  expect(session.errors).toEqual([]);
});
