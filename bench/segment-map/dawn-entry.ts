// The segment map's frame time on the device machine's GPU (Dawn for Node: no canvas, so the painter
// draws an offscreen texture of the canvas's size). node bench/segment-map/build-dawn.mjs bundles it.
import { create, globals } from 'webgpu';
import { SegmentMapPainter, SegmentMapScene } from '../../src/gpu/segment-map/segment-map-painter';
import { frameLoop, HEIGHT, WIDTH } from './frame-loop';
import { syntheticLayout } from './synthetic-layout';

Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error('no WebGPU adapter');
const device = await adapter.requestDevice({
  requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
});
const format: GPUTextureFormat = 'bgra8unorm';
const painter = new SegmentMapPainter(device, format);
const results: Record<string, unknown> = { adapter: `${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.device}`.trim() };
for (const dpr of [1, 2]) {
  const texture = device.createTexture({ size: [WIDTH * dpr, HEIGHT * dpr], format, usage: GPUTextureUsage.RENDER_ATTACHMENT });
  let scene: SegmentMapScene | null = null;
  const f = await frameLoop(
    syntheticLayout(1_000_000),
    60,
    (layout, g) => (scene = new SegmentMapScene(g, layout)),
    (view) => painter.paint(texture.createView(), scene, { ...view, dpr }),
    () => device.queue.onSubmittedWorkDone(),
  );
  const sorted = [...f.ms].sort((a, b) => a - b);
  results[`dpr${dpr}`] = {
    medianMs: sorted[Math.floor(sorted.length / 2)],
    p95Ms: sorted[Math.ceil(sorted.length * 0.95) - 1],
    cpuMedianMs: [...f.cpu].sort((a, b) => a - b)[Math.floor(f.cpu.length / 2)],
    setSceneMs: f.setSceneMs,
  };
}
console.log(JSON.stringify(results, null, 2));
process.exit(0);
