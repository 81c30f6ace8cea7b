// A page with nothing but the segment map, for its browser test and benchmark (bundled by esbuild in
// serve-harness.ts). `?layout=transformer|gpt2|synthetic&blocks=N&theme=dark`.
import { createRoot } from 'react-dom/client';
import { DEFAULT_CONFIG } from '../../src/allocator/config';
import { fitSegmentMap, blockRect } from '../../src/plot/segment-map-geometry';
import { SegmentMapRenderer } from '../../src/gpu/segment-map/segment-map-renderer';
import { memoryLayout, type MemoryLayout } from '../../src/trace/measures/memory-layout';
import { replay } from '../../src/trace/replay/replay';
import { replaySnapshot } from '../../src/trace/replay/replay-snapshot';
import { RequestKind, type RequestStream } from '../../src/trace/stream/request-stream';
import { decodeSnapshotFile } from '../../src/trace/snapshot/snapshot-file';
import { transformerTraining } from '../../src/trace/stream/workloads';
import { SegmentMap } from '../../src/views/SegmentMap';
import { frameLoop, HEIGHT, WIDTH, type FrameFigures } from './frame-loop';
import { syntheticLayout } from './synthetic-layout';

interface Scene {
  layout: MemoryLayout;
  cursor: number;
  frames?: (id: number) => Promise<string[]>;
}

function allocIndex(stream: RequestStream): Int32Array {
  const at = new Int32Array(stream.idCount).fill(-1);
  for (let i = 0; i < stream.length; i++) if (stream.kind[i] === RequestKind.alloc) at[stream.id[i]!] = i;
  return at;
}

async function scene(kind: string, blocks: number): Promise<Scene> {
  if (kind === 'synthetic') return { layout: syntheticLayout(blocks), cursor: 100_000, frames: async (id) => [`synthetic_op_${id % 7} model.py:${id % 300}`] };
  if (kind === 'gpt2') {
    const bytes = new Uint8Array(await (await fetch('/fixtures/train_gpt2-n12__default.pickle.gz')).arrayBuffer());
    const snapshot = decodeSnapshotFile(bytes);
    const { result, stream } = replaySnapshot(snapshot, {});
    const at = allocIndex(stream);
    const trace = snapshot.device_traces[0] ?? [];
    const frames = async (id: number): Promise<string[]> => {
      const src = at[id]! >= 0 ? stream.source[at[id]!]! : -1;
      return (trace[src]?.frames ?? []).map((f) => `${f.name} ${f.filename}:${f.line}`);
    };
    return { layout: memoryLayout(result.allocator, (id) => at[id]!), cursor: stream.length - 1, frames };
  }
  const full = transformerTraining.generate({ steps: 3 });
  const stream = { ...full, length: Math.floor(full.length * 0.6) };
  const at = allocIndex(stream);
  const { allocator } = replay(stream, { config: { ...DEFAULT_CONFIG, maxSplitSize: 64 * 2 ** 20 } });
  return { layout: memoryLayout(allocator, (id) => at[id]!), cursor: stream.length - 1, frames: async (id) => [`frame_of_${id} train.py:1`, 'main train.py:99'] };
}

/** Frame times of the renderer alone (bench/segment-map/frame-loop.ts) on a canvas of its own. */
async function benchFrames(layout: MemoryLayout, n: number): Promise<FrameFigures> {
  const canvas = document.createElement('canvas');
  canvas.style.cssText = `width: ${WIDTH}px; height: ${HEIGHT}px; display: block`;
  document.body.append(canvas);
  const renderer = await SegmentMapRenderer.create(canvas);
  const figures = await frameLoop(
    layout,
    n,
    (l, g) => renderer.setScene(g, l),
    (view) => {
      renderer.setView(view);
      renderer.draw();
    },
    () => renderer.finished(),
  );
  const backend = renderer.backend;
  renderer.destroy();
  canvas.remove();
  return { backend, ...figures };
}

declare global {
  interface Window {
    segmentMapHarness: {
      ready: Promise<void>;
      layout: MemoryLayout | null;
      /** Page coordinates of block b's middle at the initial zoom. */
      blockCenter(b: number): { x: number; y: number };
      benchFrames(n: number): Promise<FrameFigures>;
    };
  }
}

const params = new URLSearchParams(location.search);
if (params.get('theme') === 'dark') document.documentElement.style.colorScheme = 'dark';
const root = document.createElement('main');
root.style.cssText = 'max-width: 1200px; margin: 0 auto; padding: 1rem; font-family: system-ui, sans-serif';
document.body.append(root);
document.body.style.margin = '0';
document.body.style.background = 'Canvas';
document.body.style.color = 'CanvasText';

const harness: Window['segmentMapHarness'] = {
  layout: null,
  ready: Promise.resolve(),
  blockCenter(b) {
    const canvas = document.querySelector<HTMLCanvasElement>('canvas.segment-map-canvas')!;
    const box = canvas.getBoundingClientRect();
    const g = fitSegmentMap(harness.layout!, canvas.clientHeight);
    const r = blockRect(g, harness.layout!, b);
    const pxPerByte = canvas.clientWidth / g.rowBytes;
    return { x: box.left + (r.x + r.w / 2) * pxPerByte, y: box.top + r.y + r.h / 2 };
  },
  benchFrames: (n) => benchFrames(harness.layout!, n),
};
window.segmentMapHarness = harness;
harness.ready = (async () => {
  const s = await scene(params.get('layout') ?? 'transformer', Number(params.get('blocks') ?? 1_000_000));
  harness.layout = s.layout;
  if (params.get('mount') === '0') return;
  createRoot(root).render(<SegmentMap layout={s.layout} cursor={s.cursor} {...(s.frames ? { frames: s.frames } : {})} />);
  // Wait until the renderer has drawn.
  for (let i = 0; i < 400 && !document.querySelector('canvas[data-backend="webgpu"], canvas[data-backend="canvas2d"]'); i++) await new Promise((r) => setTimeout(r, 25));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
})();
