// Segment-map frame time with a million blocks, in Chromium (WebGPU on whatever adapter it finds;
// SwiftShader, on the CPU, here): 60 frames zooming in and out while panning, each timed from the
// view change to the GPU finishing the frame (bench/segment-map/harness-entry.tsx, benchFrames).
import { existsSync, readFileSync } from 'node:fs';
import { launch } from '../tests/browser/chromium';
import { median, report, ROOT } from './harness';
import { HARNESS_ORIGIN, serveHarness } from './segment-map/serve-harness';

const BLOCKS = Number(process.env.SEGMENT_MAP_BLOCKS ?? 1_000_000);
const FRAMES = 60;

export async function benchSegmentMap(): Promise<void> {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await serveHarness(page);
    await page.goto(`${HARNESS_ORIGIN}/?layout=synthetic&blocks=${BLOCKS}&mount=0`);
    await page.evaluate(() => window.segmentMapHarness.ready);
    const { backend, ms, cpu, setSceneMs } = await page.evaluate((n) => window.segmentMapHarness.benchFrames(n), FRAMES);
    const adapter = await page.evaluate(async () => {
      const a = await navigator.gpu?.requestAdapter();
      return a ? `${a.info.vendor} ${a.info.architecture}`.trim() : 'no adapter';
    });
    const sorted = [...ms].sort((a, b) => a - b);
    const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
    if (process.env.SEGMENT_MAP_VERBOSE) console.log(ms.map((x, i) => `${x.toFixed(0)}/${cpu[i]!.toFixed(0)}`).join(' '));
    report(`Segment map: ${BLOCKS.toLocaleString()} blocks, ${FRAMES} frames of zoom and pan (${backend}, ${adapter})`, {
      'frame time, median': `${median(ms).toFixed(1)} ms`,
      'frame time, p95': `${p95.toFixed(1)} ms`,
      'of which CPU (culling, level of detail, encoding), median': `${median(cpu).toFixed(1)} ms`,
      'first frame after a new layout (pack + upload + draw)': `${setSceneMs.toFixed(0)} ms`,
    });
  } finally {
    await browser.close();
  }
  showRecorded();
}

interface RecordedFrames {
  medianMs: number;
  p95Ms: number;
  cpuMedianMs: number;
  setSceneMs: number;
}

/** Figures from the device machine's H200 (bench/segment-map/build-dawn.mjs says how to make them). */
function showRecorded(): void {
  const file = `${ROOT}/bench/results/h200-segment-map.json`;
  if (!existsSync(file)) return;
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as { adapter: string } & Record<string, RecordedFrames | string>;
  for (const [key, f] of Object.entries(recorded)) {
    if (typeof f === 'string') continue;
    report(`Segment map: 1,000,000 blocks, recorded on the device machine (Dawn for Node, ${recorded.adapter.replace(/\s+/g, ' ')}, ${key})`, {
      'frame time, median': `${f.medianMs.toFixed(2)} ms`,
      'frame time, p95': `${f.p95Ms.toFixed(1)} ms`,
      'of which CPU, median': `${f.cpuMedianMs.toFixed(2)} ms`,
      'first frame after a new layout': `${f.setSceneMs.toFixed(0)} ms`,
    });
  }
}

