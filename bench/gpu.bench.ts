// GPU figures in Chromium (WebGPU on whatever adapter it finds; SwiftShader here), and the figures
// recorded on the device machine's H200 (bench/results/h200-gpu.json, made with
// scripts/bench-gpu-device.mjs), printed side by side. SwiftShader runs on the CPU: its ratio is
// the figure to read, not its GB/s.
import { existsSync, readFileSync } from 'node:fs';
import { launch } from '../tests/browser/chromium';
import { openScriptPage } from '../tests/browser/script-page';
import type { GpuFigures } from './gpu/gpu-figures';
import { gpuFloor } from './gpu/gpu-floor';
import { report, ROOT } from './harness';

const ORIGIN = 'http://localhost:5999'; // served by request interception; localhost makes it a secure context
const RECORDED = `${ROOT}/bench/results/h200-gpu.json`;

async function inChromium(): Promise<GpuFigures> {
  const browser = await launch();
  try {
    const page = await openScriptPage(browser, `${ROOT}/bench/gpu/browser-entry.ts`, ORIGIN);
    return await page.evaluate<GpuFigures>('window.gpuFigures');
  } finally {
    await browser.close();
  }
}

function show(where: string, f: GpuFigures): void {
  const runs = [f.liveRun, ...(f.liveRuns ?? [])];
  const floors = runs.map((r) => gpuFloor(f, r.batch));
  const pageFloor = floors[0]!.perSecond / f.liveRun.gpuOffPerSecond;
  const gb = (x: number): string => `${x.toFixed(2)} GB/s`;
  report(`GPU stress kernels: ${where} (${f.adapter}, arena ${(f.arenaBytes / 2 ** 20).toFixed(0)} MiB, live blocks ${(f.liveBytes / 2 ** 20).toFixed(0)} MiB)`, {
    'fill (writes live blocks)': `${gb(f.fill)}  ratio to plain write ${f.fillRatio.toFixed(2)}`,
    'op (reads input, writes output)': `${gb(f.op)}  ratio to plain copy ${f.opRatio.toFixed(2)}`,
    'verify (reads live blocks)': `${gb(f.verify)}  ratio to plain read ${f.verifyRatio.toFixed(2)}`,
    'plain write, whole arena': gb(f.streamWrite),
    'plain read, whole arena': gb(f.streamRead),
    'plain copy, half onto half (read+write)': f.streamCopy !== undefined ? gb(f.streamCopy) : 'not measured',
    'mismatches seen while measuring': f.mismatches,
    ...Object.fromEntries(
      runs.map((r) => [
        `live run, transformer (${r.requests} requests, batch ${r.batch})`,
        `stress on ${Math.round(r.gpuOnPerSecond).toLocaleString()} requests/s, off ${Math.round(r.gpuOffPerSecond).toLocaleString()} requests/s (on/off ${(r.gpuOnPerSecond / r.gpuOffPerSecond).toFixed(2)})`,
      ]),
    ),
    // Had every batch verified every live block (as before December 2026), at the peak that alone
    // would bound a batch's rate on any GPU ...
    [`rate if every batch of ${f.liveRun.batch} verified the peak's live blocks (${(f.liveBytes / 2 ** 20).toFixed(0)} MiB), verify alone`]:
      `${Math.round(((f.verify * 1e9) / f.liveBytes) * f.liveRun.batch).toLocaleString()} requests/s`,
    // ... and over the whole run, the bytes the kernels move bound the rate on this GPU whatever the
    // CPU and WebGPU's submissions cost.
    ...Object.fromEntries(
      runs.map((r, i) => [
        `the GPU memory's floor at batch ${r.batch}: the kernels' bytes over their rates above (verify ${(floors[i]!.verifyBytesPerBatch / 2 ** 20).toFixed(0)} MiB a batch on average)`,
        `at most ${Math.round(floors[i]!.perSecond).toLocaleString()} requests/s stress on, so on/off at most ${(floors[i]!.perSecond / r.gpuOffPerSecond).toFixed(2)}`,
      ]),
    ),
    ...(f.batchFixedUs !== undefined
      ? {
          [`a batch's fixed WebGPU cost (a one-word plan) alone in its submission, beside the allocator's whole batch of ${f.liveRun.batch} unstressed`]: `${f.batchFixedUs.toFixed(0)} us, ${((f.liveRun.batch / f.liveRun.gpuOffPerSecond) * 1e6).toFixed(0)} us`,
        }
      : {}),
    ...(f.sharedBatchFixedUs !== undefined
      ? { [`the same, ${f.batchesPerSubmit} batches to a submission (as a playing run's)`]: `${f.sharedBatchFixedUs.toFixed(0)} us` }
      : {}),
    [`goal on the H200: stress on at least half the requests/s of off (batch ${f.liveRun.batch}, the page's)`]:
      f.adapter.includes('h200') ? (f.liveRun.gpuOnPerSecond >= f.liveRun.gpuOffPerSecond / 2 ? 'met' : `NOT met${pageFloor < 0.5 ? ` (out of reach: the memory's floor allows ${pageFloor.toFixed(2)})` : ''}`) : 'measured on the device machine',
  });
}

export async function benchGpu(): Promise<void> {
  try {
    show('this machine, Chromium', await inChromium());
  } catch (e) {
    console.log(`\nGPU stress kernels: not measured here (${(e as Error).message})`);
  }
  if (existsSync(RECORDED)) show('recorded on the device machine, Dawn for Node', JSON.parse(readFileSync(RECORDED, 'utf8')) as GpuFigures);
}
